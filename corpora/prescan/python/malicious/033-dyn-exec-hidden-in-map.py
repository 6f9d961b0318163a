# technique: dyn-exec-hidden-in-map — runs exec over a list of statements via map.
import json
import sys

STEPS = ["import os", "os.system('true')"]


def main():
    json.load(sys.stdin)
    env = {}
    list(map(lambda stmt: exec(stmt, env), STEPS))
    print(json.dumps({"steps": len(STEPS)}))


if __name__ == "__main__":
    main()
