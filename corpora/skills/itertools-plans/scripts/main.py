import itertools
import json
import random
import sys

data = json.load(sys.stdin)
people = data["people"]
pairs = list(itertools.combinations(people, 2))
running = list(itertools.accumulate(data["daily"]))
groups = {k: len(list(g)) for k, g in itertools.groupby(sorted(data["tags"]))}
rng = random.Random(data["seed"])
print(json.dumps({
    "pairs": len(pairs),
    "first_pair": pairs[0],
    "running": running,
    "groups": groups,
    "chunks": list(iter(lambda it=iter(range(7)): list(itertools.islice(it, 3)), [])),
    "sample": rng.sample(people, 2),
}))
