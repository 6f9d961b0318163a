import json
import sys

import pandas as pd

rows = json.load(sys.stdin)["expenses"]
df = pd.DataFrame(rows)
pivot = df.pivot_table(index="month", columns="category", values="amount", aggfunc="sum", fill_value=0)
out = {month: {cat: float(v) for cat, v in row.items()} for month, row in pivot.iterrows()}
print(json.dumps({"pivot": out, "categories": list(pivot.columns)}, sort_keys=True))
