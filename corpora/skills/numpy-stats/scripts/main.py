import json
import sys

import numpy as np

values = np.array(json.load(sys.stdin)["values"], dtype=float)
p25, p50, p90 = np.percentile(values, [25, 50, 90])
print(json.dumps({
    "count": int(values.size),
    "mean": round(float(values.mean()), 4),
    "std": round(float(values.std(ddof=1)), 4),
    "median": float(p50),
    "p25": float(p25),
    "p90": round(float(p90), 4),
    "min": float(values.min()),
    "max": float(values.max()),
}))
