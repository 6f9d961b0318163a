# benign: draws a line chart of daily totals with matplotlib and returns the PNG as base64.
# sample-input: {"days": ["2026-11-01", "2026-11-02", "2026-11-03"], "totals": [12, 18, 9]}
import base64
import io
import json
import sys
from datetime import date

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    data = json.load(sys.stdin)
    days = [date.fromisoformat(d) for d in data.get("days", [])]
    totals = data.get("totals", [])
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(days, totals, marker="o")
    ax.set_ylabel("total")
    fig.autofmt_xdate()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    encoded = base64.b64encode(buf.getvalue()).decode("ascii")
    print(json.dumps({"png_bytes": len(buf.getvalue()), "png_base64_prefix": encoded[:16], "points": len(days)}))


if __name__ == "__main__":
    main()
