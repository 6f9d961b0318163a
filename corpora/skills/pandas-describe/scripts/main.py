import json
import sys

import pandas as pd

data = json.load(sys.stdin)
s = pd.Series(data["values"], name=data.get("name", "values"))
desc = s.describe()
print(json.dumps({"name": s.name, "summary": {k: round(float(v), 4) for k, v in desc.items()}}))
