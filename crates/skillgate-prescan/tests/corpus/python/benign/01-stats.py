# benign: column statistics with pandas; words like exec, system and socket only in data.
import json
import sys

import numpy as np
import pandas as pd

request = json.load(sys.stdin)
frame = pd.DataFrame(request.get("rows", []))
summary = {"exec": "not a call", "system": "metric", "socket": 3}
if not frame.empty:
    summary["mean"] = frame.select_dtypes(include=[np.number]).mean().to_dict()
print(json.dumps(summary))
