import base64
import io
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

data = json.load(sys.stdin)
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(data["x"], data["y"], marker="o")
ax.set_title(data.get("title", "Trend"))
buf = io.BytesIO()
fig.savefig(buf, format="png", dpi=72)
png = buf.getvalue()
print(json.dumps({"points": len(data["x"]), "chart_png_base64": base64.b64encode(png).decode("ascii")}))
