import json
import sys

import numpy as np

data = json.load(sys.stdin)
x = np.array(data["x"], dtype=float)
y = np.array(data["y"], dtype=float)
r = np.corrcoef(x, y)[0, 1]
slope, intercept = np.polyfit(x, y, 1)
print(json.dumps({"r": round(float(r), 6), "slope": round(float(slope), 6), "intercept": round(float(intercept), 6)}))
