#!/bin/sh
# The warehouse worker of examples/order.asl.json, for `swf-worker --exec`:
# packs one item ({"sku", "position"} on stdin) and says into which box.
python3 -c '
import json, sys
item = json.load(sys.stdin)
print(json.dumps({"sku": item["sku"], "box": "box-%d" % (item["position"] + 1)}))'
