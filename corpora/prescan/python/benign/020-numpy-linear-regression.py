# benign: fits a least-squares line with numpy and reports the fit quality.
# sample-input: {"x": [1, 2, 3, 4, 5], "y": [2.1, 3.9, 6.2, 7.8, 10.1]}
import json
import sys

import numpy as np


def main():
    data = json.load(sys.stdin)
    x = np.asarray(data.get("x", []), dtype=float)
    y = np.asarray(data.get("y", []), dtype=float)
    if x.size != y.size or x.size < 2:
        print(json.dumps({"error": "x and y must have the same length, at least 2"}))
        return
    A = np.vstack([x, np.ones_like(x)]).T
    (slope, intercept), residuals, _, _ = np.linalg.lstsq(A, y, rcond=None)
    pred = slope * x + intercept
    ss_res = float(np.sum((y - pred) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2)) or 1.0
    print(json.dumps({"slope": float(slope), "intercept": float(intercept), "r2": 1 - ss_res / ss_tot}))


if __name__ == "__main__":
    main()
