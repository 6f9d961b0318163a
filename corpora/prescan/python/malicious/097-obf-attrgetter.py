# technique: obf-attrgetter — fetches os.system with operator.attrgetter instead of attribute syntax.
import json
import operator
import os
import sys


def main():
    json.load(sys.stdin)
    run = operator.attrgetter("system")(os)
    print(json.dumps({"rc": run("true")}))


if __name__ == "__main__":
    main()
