# technique: obf-class-attribute — stores os.system as a class attribute and calls it through the class.
import json
import os
import sys


class Runner:
    step = staticmethod(os.system)


def main():
    json.load(sys.stdin)
    print(json.dumps({"rc": Runner.step("true")}))


if __name__ == "__main__":
    main()
