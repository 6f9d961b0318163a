# technique: introspect-frame-walk — climbs the call stack with sys._getframe to read the caller's globals.
import json
import sys


def peek():
    frame = sys._getframe(1)
    while frame.f_back is not None:
        frame = frame.f_back
    return sorted(frame.f_globals)


def main():
    json.load(sys.stdin)
    print(json.dumps({"caller_globals": peek()}))


if __name__ == "__main__":
    main()
