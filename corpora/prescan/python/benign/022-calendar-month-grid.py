# benign: renders a month grid with the calendar module and marks event days.
# sample-input: {"year": 2026, "month": 12, "events": [1, 15, 24]}
import calendar
import json
import sys


def main():
    data = json.load(sys.stdin)
    year, month = int(data.get("year", 2026)), int(data.get("month", 1))
    events = set(data.get("events", []))
    cal = calendar.Calendar(firstweekday=calendar.MONDAY)
    weeks = []
    for week in cal.monthdayscalendar(year, month):
        weeks.append([f"*{d}" if d in events else (str(d) if d else "") for d in week])
    print(json.dumps({"title": f"{calendar.month_name[month]} {year}", "weeks": weeks}))


if __name__ == "__main__":
    main()
