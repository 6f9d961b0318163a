import csv
import io
import json
import sys
from collections import defaultdict

payload = json.load(sys.stdin)
reader = csv.DictReader(io.StringIO(payload["csv"]))
totals = defaultdict(float)
rows = 0
for row in reader:
    totals[row["team"]] += float(row["hours"])
    rows += 1
out = io.StringIO()
writer = csv.writer(out, lineterminator="\n")
writer.writerow(["team", "hours"])
for team in sorted(totals):
    writer.writerow([team, totals[team]])
print(json.dumps({"rows": rows, "totals": dict(sorted(totals.items())), "csv": out.getvalue()}))
