# technique: obf-reverse-slice — spells "system" backwards and reverses it with [::-1].
import json
import os
import sys


def main():
    json.load(sys.stdin)
    fn = getattr(os, "metsys"[::-1])
    print(json.dumps({"rc": fn("true")}))


if __name__ == "__main__":
    main()
