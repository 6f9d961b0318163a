import json
import sys

from scipy import stats

data = json.load(sys.stdin)
res = stats.ttest_ind(data["control"], data["treatment"], equal_var=False)
print(json.dumps({
    "t": round(float(res.statistic), 4),
    "p": float(f"{res.pvalue:.3g}"),
    "significant": bool(res.pvalue < data.get("alpha", 0.05)),
}))
