import json
import sys


def main():
    try:
        data = json.load(sys.stdin)
        amount = float(data["amount"])
        if amount < 0:
            raise ValueError("amount must not be negative")
        rate = data["rates"][data["currency"]]
        print(json.dumps({"ok": True, "converted": round(amount * rate, 2)}))
    except KeyError as e:
        print(json.dumps({"ok": False, "error": f"missing field: {e.args[0]}"}))
    except (TypeError, ValueError) as e:
        print(json.dumps({"ok": False, "error": str(e)}))
    sys.exit(0)


main()
