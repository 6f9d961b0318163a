# technique: obf-percent-format — builds the attribute name "system" with % formatting.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    fn = getattr(os, "%s%s" % ("sys", "tem"))
    print(json.dumps({"rc": fn("true")}))


if __name__ == "__main__":
    main()
