# benign: computes a sliding-window maximum with collections.deque.
# sample-input: {"values": [1, 3, -1, -3, 5, 3, 6, 7], "k": 3}
import json
import sys
from collections import deque


def window_max(values, k):
    dq, out = deque(), []
    for i, v in enumerate(values):
        while dq and values[dq[-1]] <= v:
            dq.pop()
        dq.append(i)
        if dq[0] <= i - k:
            dq.popleft()
        if i >= k - 1:
            out.append(values[dq[0]])
    return out


def main():
    data = json.load(sys.stdin)
    k = max(1, int(data.get("k", 2)))
    print(json.dumps({"max": window_max(data.get("values", []), k)}))


if __name__ == "__main__":
    main()
