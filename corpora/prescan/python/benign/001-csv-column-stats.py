# benign: computes per-column statistics of a CSV document passed in the input.
# sample-input: {"csv": "region,units,price\nnorth,12,3.5\nsouth,7,4.25\nnorth,3,3.5\n"}
import csv
import io
import json
import statistics
import sys


def numeric_columns(rows):
    cols = {}
    for row in rows:
        for key, value in row.items():
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue
            cols.setdefault(key, []).append(number)
    return cols


def main():
    data = json.load(sys.stdin)
    reader = csv.DictReader(io.StringIO(data.get("csv", "")))
    rows = list(reader)
    stats = {}
    for name, values in numeric_columns(rows).items():
        stats[name] = {
            "count": len(values),
            "mean": statistics.fmean(values),
            "median": statistics.median(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        }
    print(json.dumps({"rows": len(rows), "columns": stats}))


if __name__ == "__main__":
    main()
