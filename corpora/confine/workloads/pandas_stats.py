"""A data skill: read JSON rows on stdin, summarise them with pandas, answer JSON."""
import json
import sys

import pandas as pd

request = json.load(sys.stdin)
frame = pd.DataFrame(request.get("data") or [{"a": 1, "b": 2.5}, {"a": 3, "b": 4.0}])
summary = frame.describe().to_dict()
grouped = frame.groupby(frame.columns[0]).sum(numeric_only=True).to_dict()
print(json.dumps({"rows": len(frame), "summary": summary, "grouped": grouped}, default=str))
