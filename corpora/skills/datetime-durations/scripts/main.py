import json
import sys
from datetime import date, datetime, timedelta, timezone

data = json.load(sys.stdin)
start = datetime.fromisoformat(data["start"])
end = datetime.fromisoformat(data["end"])
delta = end - start
due = date.fromisoformat(data["invoice_date"]) + timedelta(days=data["net_days"])
print(json.dumps({
    "hours": delta.total_seconds() / 3600,
    "days": delta.days,
    "start_weekday": start.strftime("%A"),
    "due": due.isoformat(),
    "due_weekday": due.strftime("%a"),
    "start_utc": start.astimezone(timezone.utc).isoformat(),
}))
