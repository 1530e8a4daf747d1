#!/bin/sh
# The payments worker of examples/order.asl.json, for `swf-worker --exec`.
# Reads {"orderId", "amount"} on stdin. The first attempt of every charge is
# throttled (to show the Charge state's Retry at work): a JSON object on the
# last line of stderr names the error, and the exit status says it failed.
# Later attempts print the charge.
input=$(cat)
if [ "${SWF_ATTEMPT:-0}" = 0 ]; then
    echo '{"error": "Payment.Throttled", "cause": "the payment provider asks to slow down"}' >&2
    exit 1
fi
printf '%s' "$input" | python3 -c '
import json, sys
order = json.load(sys.stdin)
print(json.dumps({"chargeId": "ch_" + order["orderId"], "amount": order["amount"]}))'
