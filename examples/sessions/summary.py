# Step 3, after the kill: the clean table and the chart are as the recorded steps left them.
import json
import os

import pandas as pd

clean = pd.read_csv("data/clean.csv")
print(json.dumps({"kept": len(clean), "total": round(float(clean["amount"].sum()), 2),
                  "chart_bytes": os.path.getsize("chart.png")}))
