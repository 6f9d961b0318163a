# technique: introspect-subclasses — walks object.__subclasses__() to reach os through a loaded class.
import json
import sys


def main():
    json.load(sys.stdin)
    rc = None
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            rc = cls.__init__.__globals__["system"]("true")
            break
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
