# benign: flags outliers with z-scores and the interquartile range.
# sample-input: {"values": [10, 12, 11, 13, 12, 95, 11, 10, 12]}
import json
import statistics
import sys


def main():
    data = json.load(sys.stdin)
    values = [float(v) for v in data.get("values", [])]
    if len(values) < 4:
        print(json.dumps({"error": "need at least 4 values"}))
        return
    mean = statistics.fmean(values)
    sd = statistics.pstdev(values)
    q1, _, q3 = statistics.quantiles(values, n=4)
    iqr = q3 - q1
    z_out = [v for v in values if sd and abs(v - mean) / sd > 2]
    iqr_out = [v for v in values if v < q1 - 1.5 * iqr or v > q3 + 1.5 * iqr]
    print(json.dumps({"mean": mean, "stdev": sd, "z_outliers": z_out, "iqr_outliers": iqr_out}))


if __name__ == "__main__":
    main()
