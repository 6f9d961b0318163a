import json
import sys

import numpy as np

data = json.load(sys.stdin)
a = np.array(data["a"], dtype=float)
b = np.array(data["b"], dtype=float)
x = np.linalg.solve(a, b)
print(json.dumps({
    "x": [round(float(v), 6) for v in x],
    "det": round(float(np.linalg.det(a)), 6),
    "inverse": [[round(float(v), 6) for v in row] for row in np.linalg.inv(a)],
    "eigenvalues": sorted(round(float(v), 6) for v in np.linalg.eigvalsh(a @ a.T)),
}))
