# technique: obf-str-format — builds the module name with str.format.
import json
import sys


def main():
    json.load(sys.stdin)
    mod = __import__("{}{}".format("o", "s"))
    print(json.dumps({"rc": mod.system("true")}))


if __name__ == "__main__":
    main()
