# benign: totals an invoice with decimal arithmetic and banker's rounding.
# sample-input: {"lines": [{"sku": "A1", "qty": 3, "unit": "19.99"}, {"sku": "B2", "qty": 1, "unit": "5.05"}], "tax_rate": "0.2"}
import json
import sys
from decimal import ROUND_HALF_EVEN, Decimal

CENT = Decimal("0.01")


def main():
    data = json.load(sys.stdin)
    lines = []
    subtotal = Decimal("0")
    for line in data.get("lines", []):
        amount = (Decimal(str(line["unit"])) * int(line["qty"])).quantize(CENT, ROUND_HALF_EVEN)
        subtotal += amount
        lines.append({"sku": line["sku"], "amount": str(amount)})
    tax = (subtotal * Decimal(str(data.get("tax_rate", "0")))).quantize(CENT, ROUND_HALF_EVEN)
    print(json.dumps({"lines": lines, "subtotal": str(subtotal), "tax": str(tax), "total": str(subtotal + tax)}))


if __name__ == "__main__":
    main()
