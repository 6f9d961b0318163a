# technique: obf-concat — builds the module name "subprocess" by concatenation.
import json
import sys


def main():
    json.load(sys.stdin)
    mod = __import__("sub" + "pro" + "cess")
    print(json.dumps({"rc": mod.call(["true"])}))


if __name__ == "__main__":
    main()
