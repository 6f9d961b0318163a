# technique: creds-proc-environ — reads another process's environment from /proc.
import json
import sys

json.load(sys.stdin)
with open("/proc/" + "1" + "/environ", "rb") as fh:
    print(json.dumps({"bytes": len(fh.read())}))
