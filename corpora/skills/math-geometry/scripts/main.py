import json
import math
import sys

data = json.load(sys.stdin)
(x1, y1), (x2, y2) = data["a"], data["b"]
r = data["radius"]
print(json.dumps({
    "distance": round(math.dist((x1, y1), (x2, y2)), 6),
    "angle_deg": round(math.degrees(math.atan2(y2 - y1, x2 - x1)), 6),
    "circle_area": round(math.pi * r ** 2, 6),
    "hypot": math.hypot(3, 4),
    "gcd": math.gcd(*data["ints"]),
    "comb": math.comb(10, 3),
}))
