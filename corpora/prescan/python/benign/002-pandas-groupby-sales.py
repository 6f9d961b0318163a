# benign: groups sales records with pandas; the records carry a "system" field naming the source ERP system.
# sample-input: {"records": [{"system": "sap", "region": "emea", "amount": 120.5}, {"system": "oracle", "region": "emea", "amount": 80}, {"system": "sap", "region": "apac", "amount": 42}]}
import json
import sys

import pandas as pd


def main():
    data = json.load(sys.stdin)
    df = pd.DataFrame(data.get("records", []), columns=["system", "region", "amount"])
    df["amount"] = pd.to_numeric(df["amount"], errors="coerce").fillna(0.0)
    by_system = df.groupby("system")["amount"].agg(["sum", "count"]).reset_index()
    by_region = df.groupby("region")["amount"].sum().sort_values(ascending=False)
    out = {
        "by_system": by_system.to_dict(orient="records"),
        "by_region": {k: float(v) for k, v in by_region.items()},
        "total": float(df["amount"].sum()),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
