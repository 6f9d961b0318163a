# benign: computes column means, a correlation matrix and the rank of a numeric matrix with numpy.
# sample-input: {"matrix": [[1, 2, 3], [2, 4, 6.5], [3, 6, 8], [4, 8, 12]]}
import json
import sys

import numpy as np


def main():
    data = json.load(sys.stdin)
    m = np.asarray(data.get("matrix", [[0]]), dtype=float)
    corr = np.corrcoef(m, rowvar=False) if m.shape[0] > 1 else np.ones((m.shape[1], m.shape[1]))
    print(json.dumps({
        "shape": list(m.shape),
        "means": m.mean(axis=0).round(4).tolist(),
        "rank": int(np.linalg.matrix_rank(m)),
        "corr": np.nan_to_num(corr).round(4).tolist(),
    }))


if __name__ == "__main__":
    main()
