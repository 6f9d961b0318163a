import json
import sys

import pandas as pd

data = json.load(sys.stdin)
df = pd.DataFrame(data["sales"])
grouped = df.groupby("region")["amount"].agg(["sum", "mean", "count"])
result = {
    region: {"total": float(row["sum"]), "average": round(float(row["mean"]), 2), "orders": int(row["count"])}
    for region, row in grouped.iterrows()
}
best = max(result, key=lambda r: result[r]["total"])
print(json.dumps({"by_region": result, "best_region": best}, sort_keys=True))
