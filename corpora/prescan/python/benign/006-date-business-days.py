# benign: counts business days between two dates, skipping weekends and given holidays.
# sample-input: {"start": "2026-12-01", "end": "2026-12-31", "holidays": ["2026-12-25", "2026-12-26"]}
import calendar
import json
import sys
from datetime import date, timedelta


def parse(text):
    return date.fromisoformat(text)


def main():
    data = json.load(sys.stdin)
    start = parse(data.get("start", "2026-01-01"))
    end = parse(data.get("end", "2026-01-31"))
    holidays = {parse(h) for h in data.get("holidays", [])}
    day, count, weekend = start, 0, 0
    while day <= end:
        if day.weekday() >= calendar.SATURDAY:
            weekend += 1
        elif day not in holidays:
            count += 1
        day += timedelta(days=1)
    print(json.dumps({"business_days": count, "weekend_days": weekend, "holidays": len(holidays)}))


if __name__ == "__main__":
    main()
