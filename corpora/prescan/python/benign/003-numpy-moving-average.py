# benign: smooths a numeric series with a numpy moving average and reports its trend.
# sample-input: {"series": [3, 5, 4, 6, 8, 7, 9, 11, 10], "window": 3}
import json
import sys

import numpy as np


def moving_average(values, window):
    kernel = np.ones(window) / window
    return np.convolve(values, kernel, mode="valid")


def main():
    data = json.load(sys.stdin)
    series = np.asarray(data.get("series", []), dtype=float)
    window = max(1, min(int(data.get("window", 3)), len(series) or 1))
    smooth = moving_average(series, window) if series.size else np.array([])
    slope = float(np.polyfit(np.arange(smooth.size), smooth, 1)[0]) if smooth.size > 1 else 0.0
    print(json.dumps({"smoothed": smooth.round(3).tolist(), "slope": round(slope, 4)}))


if __name__ == "__main__":
    main()
