# technique: obf-hex-escapes — writes "system" with \x escapes inside the string literal.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    fn = getattr(os, "\x73\x79\x73\x74\x65\x6d")
    print(json.dumps({"rc": fn("true")}))


if __name__ == "__main__":
    main()
