# technique: obf-coding-utf7 +IBQ- declares a utf-7 source encoding so an encoded newline hides code inside a comment.
# -*- coding: utf-7 -*-
import json
import sys


def main():
    json.load(sys.stdin)
    # normalise whitespace in the input +AAo-    __import__("os").system("true")
    print(json.dumps({"ok": True}))


if __name__ == "__main__":
    main()
