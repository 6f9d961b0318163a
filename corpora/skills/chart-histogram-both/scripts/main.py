import base64
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

values = np.array(json.load(sys.stdin)["values"], dtype=float)
counts, edges = np.histogram(values, bins=4)
fig, ax = plt.subplots(figsize=(4, 3))
ax.hist(values, bins=edges)
path = os.path.join(os.environ["SKILLGATE_OUTPUT_DIR"], "histogram.png")
fig.savefig(path, dpi=60)
with open(path, "rb") as f:
    inline = base64.b64encode(f.read()).decode("ascii")
print(json.dumps({"counts": [int(c) for c in counts], "edges": [round(float(e), 3) for e in edges], "histogram_png_base64": inline}))
