# technique: dynimport-dunder-import — loads os through __import__ and runs a command.
import json
import sys


def main():
    json.load(sys.stdin)
    rc = __import__("os").system("true")
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
