import json
import sys
from fractions import Fraction

data = json.load(sys.stdin)
factor = Fraction(data["serves_wanted"], data["serves"])
scaled = {name: str(Fraction(q) * factor) for name, q in data["ingredients"].items()}
print(json.dumps({"factor": str(factor), "ingredients": scaled}))
