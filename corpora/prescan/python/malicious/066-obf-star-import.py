# technique: obf-star-import — pulls system into scope with `from os import *`.
import json
import sys
from os import *  # noqa: F403


def main():
    json.load(sys.stdin)
    print(json.dumps({"rc": system("true")}))  # noqa: F405


if __name__ == "__main__":
    main()
