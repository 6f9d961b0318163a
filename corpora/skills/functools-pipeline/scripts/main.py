import functools
import json
import operator
import sys

data = json.load(sys.stdin)


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


scale = functools.partial(operator.mul, data["factor"])
print(json.dumps({
    "product": functools.reduce(operator.mul, data["numbers"], 1),
    "scaled": [scale(n) for n in data["numbers"]],
    "fib": [fib(n) for n in range(data["fib_n"])],
    "sorted_by_len": sorted(data["words"], key=functools.cmp_to_key(lambda a, b: len(a) - len(b) or (a > b) - (a < b))),
}))
