#!/usr/bin/env python3
"""The example `payments` activity of examples/order.asl.json, for swf-worker --exec.

Reads the task input ({"orderId", "amount"}) as JSON on standard input and
prints the result as JSON on standard output; a non-zero exit fails the task
(standard error says why: a last line {"error": NAME, "cause": TEXT} names
the error, worker/cmd.c). Declines amounts over 1000 with Payment.Declined,
so the Catch of the Charge state can be seen at work.
"""
import json
import sys

task = json.load(sys.stdin)
if float(task.get("amount", 0)) > 1000:
    print(json.dumps({"error": "Payment.Declined",
                      "cause": "amount over the demo limit of 1000"}), file=sys.stderr)
    sys.exit(1)
json.dump({"chargeId": "ch_" + str(task.get("orderId", "unknown")), "fee": 0.3}, sys.stdout)
