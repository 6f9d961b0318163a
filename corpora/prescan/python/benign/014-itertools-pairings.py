# benign: builds round-robin pairings and pairwise distances with itertools.
# sample-input: {"teams": ["ada", "bob", "cy", "dee"], "points": [[0, 0], [3, 4], [6, 8]]}
import itertools
import json
import math
import sys


def main():
    data = json.load(sys.stdin)
    teams = data.get("teams", [])
    pairings = [list(p) for p in itertools.combinations(teams, 2)]
    points = [tuple(p) for p in data.get("points", [])]
    distances = {f"{a}->{b}": math.dist(a, b) for a, b in itertools.combinations(points, 2)}
    running = list(itertools.accumulate(range(1, len(teams) + 1)))
    print(json.dumps({"pairings": pairings, "distances": distances, "running": running}))


if __name__ == "__main__":
    main()
