import json
import logging
import sys

logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("skill")

data = json.load(sys.stdin)
log.info("received %d orders", len(data["orders"]))
valid = [o for o in data["orders"] if o.get("qty", 0) > 0]
for o in data["orders"]:
    if o not in valid:
        log.warning("skipping order %s with no quantity", o["id"])
print(json.dumps({"valid": [o["id"] for o in valid], "skipped": len(data["orders"]) - len(valid)}))
log.info("done")
