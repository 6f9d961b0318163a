# benign: resamples timestamped events into hourly counts with pandas.
# sample-input: {"events": ["2026-11-30T01:05:00", "2026-11-30T01:40:00", "2026-11-30T03:10:00"]}
import json
import sys

import pandas as pd


def main():
    data = json.load(sys.stdin)
    stamps = pd.to_datetime(pd.Series(data.get("events", []), dtype="object"))
    if stamps.empty:
        print(json.dumps({"hourly": {}}))
        return
    counts = pd.Series(1, index=stamps).resample("1h").sum()
    print(json.dumps({"hourly": {ts.isoformat(): int(n) for ts, n in counts.items()}}))


if __name__ == "__main__":
    main()
