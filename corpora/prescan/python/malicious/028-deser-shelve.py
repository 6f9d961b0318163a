# technique: deser-shelve — opens a shelve database, which unpickles whatever it finds.
import json
import shelve
import sys


def main():
    data = json.load(sys.stdin)
    with shelve.open(data.get("db", "/tmp/skill-cache")) as db:
        cached = {k: repr(db[k]) for k in list(db)[:5]}
    print(json.dumps({"cached": cached}))


if __name__ == "__main__":
    main()
