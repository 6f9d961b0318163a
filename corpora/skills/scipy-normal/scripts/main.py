import json
import sys

from scipy.stats import norm

data = json.load(sys.stdin)
mu, sigma = data["mean"], data["sd"]
print(json.dumps({
    "p_below": round(float(norm.cdf(data["x"], mu, sigma)), 6),
    "p_above": round(float(norm.sf(data["x"], mu, sigma)), 6),
    "q95": round(float(norm.ppf(0.95, mu, sigma)), 4),
}))
