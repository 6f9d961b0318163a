# benign: renders a histogram with matplotlib (Agg) and returns it as a base64 PNG plus an "exec_summary".
# sample-input: {"values": [1.2, 2.3, 2.9, 3.1, 3.3, 4.8, 5.0, 5.1, 7.4], "bins": 4, "title": "Latency"}
import base64
import io
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    data = json.load(sys.stdin)
    values = [float(v) for v in data.get("values", [])]
    fig, ax = plt.subplots(figsize=(4, 3))
    counts, edges, _ = ax.hist(values, bins=int(data.get("bins", 10)))
    ax.set_title(data.get("title", "Histogram"))
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    out = {
        "png_base64": base64.b64encode(buf.getvalue()).decode("ascii"),
        "exec_summary": f"{len(values)} values in {len(counts)} bins",
        "edges": [round(float(e), 3) for e in edges],
    }
    print(json.dumps({k: (v if k != "png_base64" else len(v)) for k, v in out.items()}))


if __name__ == "__main__":
    main()
