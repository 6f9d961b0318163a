# benign: pivots a long table of measurements into a wide one with pandas.
# sample-input: {"rows": [{"day": "mon", "metric": "cpu", "value": 0.4}, {"day": "mon", "metric": "mem", "value": 0.7}, {"day": "tue", "metric": "cpu", "value": 0.5}]}
import json
import sys

import pandas as pd


def main():
    data = json.load(sys.stdin)
    df = pd.DataFrame(data.get("rows", []), columns=["day", "metric", "value"])
    wide = df.pivot_table(index="day", columns="metric", values="value", aggfunc="mean")
    wide = wide.reindex(sorted(wide.columns), axis=1)
    result = {day: {m: (None if pd.isna(v) else float(v)) for m, v in row.items()} for day, row in wide.iterrows()}
    print(json.dumps({"table": result, "metrics": list(wide.columns)}))


if __name__ == "__main__":
    main()
