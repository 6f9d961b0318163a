# technique: deser-pickle-from-import — unpickles with loads imported from _pickle under an alias.
import base64
import json
import sys
from _pickle import loads as restore


def main():
    data = json.load(sys.stdin)
    obj = restore(base64.b64decode(data.get("blob", "gASVAwAAAAAAAABLAi4=")))
    print(json.dumps({"obj": repr(obj)}))


if __name__ == "__main__":
    main()
