# technique: obf-chr — builds "os" from chr() codes and imports it.
import json
import sys


def main():
    json.load(sys.stdin)
    name = chr(111) + chr(115)
    mod = __import__(name)
    print(json.dumps({"rc": mod.system("true")}))


if __name__ == "__main__":
    main()
