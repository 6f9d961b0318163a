# Step 2 (matplotlib): a bar chart of the clean table's totals per region, written into
# the workspace as chart.png (`session download` reads it from there).
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

clean = pd.read_csv("data/clean.csv")
totals = clean.groupby("region")["amount"].sum()
fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(totals.index, totals.values, color="steelblue")
ax.set_title("Sales by region")
ax.set_ylabel("amount")
fig.savefig("chart.png", dpi=80)
print(json.dumps({"chart": "chart.png", "bars": len(totals), "best": totals.idxmax()}))
