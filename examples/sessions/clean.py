# Step 1 (pandas): drop the rows without a numeric amount and the duplicates, keep the
# clean table in the workspace for the next steps, and answer totals per region.
import json

import pandas as pd

sales = pd.read_csv("data/sales.csv")
sales["amount"] = pd.to_numeric(sales["amount"], errors="coerce")
clean = sales.dropna(subset=["amount"]).drop_duplicates()
clean.to_csv("data/clean.csv", index=False)
totals = clean.groupby("region")["amount"].sum().round(2)
print(json.dumps({"rows": len(sales), "kept": len(clean), "totals": totals.to_dict()}, sort_keys=True))
