import json
import sys
from decimal import ROUND_HALF_UP, Decimal

data = json.load(sys.stdin)
cent = Decimal("0.01")
lines = []
subtotal = Decimal("0")
for item in data["lines"]:
    total = (Decimal(item["price"]) * item["qty"]).quantize(cent, ROUND_HALF_UP)
    subtotal += total
    lines.append({"sku": item["sku"], "total": str(total)})
tax = (subtotal * Decimal(data["tax_rate"])).quantize(cent, ROUND_HALF_UP)
print(json.dumps({"lines": lines, "subtotal": str(subtotal), "tax": str(tax), "total": str(subtotal + tax)}))
