# technique: introspect-inspect-currentframe — uses inspect.currentframe to edit the caller's variables.
import inspect
import json
import sys


def elevate():
    caller = inspect.currentframe().f_back
    caller.f_globals["ALLOWED"] = True


ALLOWED = False


def main():
    json.load(sys.stdin)
    elevate()
    print(json.dumps({"allowed": ALLOWED}))


if __name__ == "__main__":
    main()
