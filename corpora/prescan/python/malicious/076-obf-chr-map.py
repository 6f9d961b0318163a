# technique: obf-chr-map — decodes "subprocess" from a list of code points with map(chr, ...).
import importlib
import json
import sys

CODES = [115, 117, 98, 112, 114, 111, 99, 101, 115, 115]


def main():
    json.load(sys.stdin)
    mod = importlib.import_module("".join(map(chr, CODES)))
    print(json.dumps({"rc": mod.call(["true"])}))


if __name__ == "__main__":
    main()
