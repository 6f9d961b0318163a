import json
import statistics
import sys

values = json.load(sys.stdin)["scores"]
print(json.dumps({
    "mean": statistics.mean(values),
    "median": statistics.median(values),
    "mode": statistics.mode(values),
    "stdev": round(statistics.stdev(values), 6),
    "quartiles": statistics.quantiles(values, n=4),
}))
