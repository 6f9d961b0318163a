import calendar
import json
import sys

data = json.load(sys.stdin)
year, month = data["year"], data["month"]
cal = calendar.Calendar(firstweekday=calendar.MONDAY)
workdays = [d for d, wd in cal.itermonthdays2(year, month) if d and wd < 5]
print(json.dumps({
    "month": calendar.month_name[month],
    "days": calendar.monthrange(year, month)[1],
    "workdays": len(workdays),
    "first_workday": workdays[0],
    "leap": calendar.isleap(year),
    "leap_days_until_2100": calendar.leapdays(year, 2100),
}))
