# technique: obf-nfkc-attribute — calls os.system with the attribute spelled in mathematical letters.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    print(json.dumps({"rc": os.𝐬𝐲𝐬𝐭𝐞𝐦("true")}))


if __name__ == "__main__":
    main()
