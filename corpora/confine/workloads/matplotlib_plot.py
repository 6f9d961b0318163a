"""A charting skill: plot the input series to a PNG in the output directory, answer JSON."""
import json
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

request = json.load(sys.stdin)
series = request.get("series") or [1, 4, 9, 16, 25]
out_dir = os.environ.get("SKILLGATE_OUTPUT_DIR") or tempfile.mkdtemp()
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot(range(len(series)), series, marker="o")
ax.set_title("series")
path = os.path.join(out_dir, "plot.png")
fig.savefig(path, dpi=72)
print(json.dumps({"plot": path, "bytes": os.path.getsize(path)}))
