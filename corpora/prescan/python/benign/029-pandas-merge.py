# benign: joins orders to customers with pandas.merge and finds each customer's spend.
# sample-input: {"customers": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Lin"}], "orders": [{"customer_id": 1, "total": 30}, {"customer_id": 1, "total": 12.5}, {"customer_id": 3, "total": 9}]}
import json
import sys

import pandas as pd


def main():
    data = json.load(sys.stdin)
    customers = pd.DataFrame(data.get("customers", []), columns=["id", "name"])
    orders = pd.DataFrame(data.get("orders", []), columns=["customer_id", "total"])
    joined = orders.merge(customers, how="left", left_on="customer_id", right_on="id")
    spend = joined.groupby("customer_id")["total"].sum()
    orphans = joined[joined["name"].isna()]["customer_id"].unique().tolist()
    print(json.dumps({"spend": {str(k): float(v) for k, v in spend.items()}, "orphan_ids": [int(i) for i in orphans]}))


if __name__ == "__main__":
    main()
