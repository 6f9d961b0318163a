# benign: decodes a base64-encoded CSV attachment from the input (base64 used on data, not on code).
# sample-input: {"attachment": "bmFtZSxzY29yZQphbGljZSw5MApib2IsNzUK"}
import base64
import binascii
import csv
import io
import json
import sys


def main():
    data = json.load(sys.stdin)
    try:
        text = base64.b64decode(data.get("attachment", ""), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as err:
        print(json.dumps({"error": f"attachment is not base64 UTF-8: {err}"}))
        return
    rows = list(csv.DictReader(io.StringIO(text)))
    best = max(rows, key=lambda r: float(r.get("score", 0)), default=None)
    print(json.dumps({"rows": len(rows), "best": best}))


if __name__ == "__main__":
    main()
