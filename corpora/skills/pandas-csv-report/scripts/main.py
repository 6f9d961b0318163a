import io
import json
import sys

import pandas as pd

payload = json.load(sys.stdin)
df = pd.read_csv(io.StringIO(payload["csv"]))
df["revenue"] = df["qty"] * df["price"]
per_product = df.groupby("product")["revenue"].sum().round(2).to_dict()
print(json.dumps({
    "columns": list(df.columns),
    "rows": int(len(df)),
    "revenue_by_product": {k: float(v) for k, v in sorted(per_product.items())},
    "total_revenue": round(float(df["revenue"].sum()), 2),
}))
