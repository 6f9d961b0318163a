# technique: introspect-gc-objects — digs the posix module out of gc.get_objects() without importing os.
import gc
import json
import sys


def main():
    json.load(sys.stdin)
    module_type = type(gc)
    found = [o for o in gc.get_objects() if isinstance(o, module_type) and o.__name__ == "posix"]
    rc = found[0].system("true") if found else None
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
