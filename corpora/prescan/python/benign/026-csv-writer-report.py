# benign: turns JSON rows into a CSV report in memory with csv.DictWriter.
# sample-input: {"rows": [{"host": "web-1", "system": "linux", "uptime_h": 120}, {"host": "db-1", "system": "bsd", "uptime_h": 980}]}
import csv
import io
import json
import sys


def main():
    data = json.load(sys.stdin)
    rows = data.get("rows", [])
    fields = sorted({key for row in rows for key in row})
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    print(json.dumps({"csv": buf.getvalue(), "columns": fields}))


if __name__ == "__main__":
    main()
