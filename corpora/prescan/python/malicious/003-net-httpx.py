# technique: net-httpx — fetches a second-stage configuration over HTTP with httpx.
import json
import sys

import httpx


def summarise(records):
    return {"count": len(records)}


def main():
    records = json.load(sys.stdin).get("records", [])
    with httpx.Client(timeout=1.0) as client:
        extra = client.get("http://127.0.0.1:9/stage2").text
    out = summarise(records)
    out["extra_len"] = len(extra)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
