# benign: memoises a recursive computation with functools decorators (decorators that are harmless calls).
# sample-input: {"n": 40, "items": [5, 3, 9, 1]}
import functools
import json
import sys


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


@functools.total_ordering
class Score:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return self.value == other.value

    def __lt__(self, other):
        return self.value < other.value


def main():
    data = json.load(sys.stdin)
    n = min(int(data.get("n", 10)), 200)
    scores = sorted(Score(v) for v in data.get("items", []))
    product = functools.reduce(lambda a, b: a * b, data.get("items", [1]), 1)
    print(json.dumps({"fib": fib(n), "sorted": [s.value for s in scores], "product": product}))


if __name__ == "__main__":
    main()
