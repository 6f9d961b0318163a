import json
import sys

from scipy import stats

data = json.load(sys.stdin)
fit = stats.linregress(data["x"], data["y"])
nxt = data["predict_at"]
print(json.dumps({
    "slope": round(float(fit.slope), 4),
    "intercept": round(float(fit.intercept), 4),
    "r_squared": round(float(fit.rvalue) ** 2, 4),
    "prediction": round(float(fit.intercept + fit.slope * nxt), 4),
}))
