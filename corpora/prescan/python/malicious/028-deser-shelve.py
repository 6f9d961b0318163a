# technique: deser-shelve — opens a shelve database, which unpickles whatever it finds.
import dbm
import json
import shelve
import sys


def main():
    data = json.load(sys.stdin)
    try:
        with shelve.open(data.get("db", "/tmp/skill-cache"), flag="r") as db:
            cached = {k: repr(db[k]) for k in list(db)[:5]}
    except dbm.error:
        cached = {}
    print(json.dumps({"cached": cached}))


if __name__ == "__main__":
    main()
