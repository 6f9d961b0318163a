import bisect
import heapq
import json
import sys

data = json.load(sys.stdin)
scores = data["scores"]
top = heapq.nlargest(data["k"], scores.items(), key=lambda kv: kv[1])
ordered = sorted(scores.values())
ranks = {name: len(ordered) - bisect.bisect_right(ordered, s) + 1 for name, s in scores.items()}
print(json.dumps({"top": top, "ranks": dict(sorted(ranks.items())), "cutoff_index": bisect.bisect_left(ordered, data["cutoff"])}))
