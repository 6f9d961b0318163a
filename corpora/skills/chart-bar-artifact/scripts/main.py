import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

data = json.load(sys.stdin)
labels = [item["label"] for item in data["items"]]
values = [item["value"] for item in data["items"]]
fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(labels, values, color="steelblue")
ax.set_title(data.get("title", "Totals"))
ax.set_ylabel("value")
path = os.path.join(os.environ["SKILLGATE_OUTPUT_DIR"], "chart.png")
fig.savefig(path, dpi=80)
print(json.dumps({"chart": "chart.png", "bars": len(labels), "max_label": labels[values.index(max(values))]}))
