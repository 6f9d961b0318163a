# technique: obf-import-alias — hides os.system behind `import os as o`.
import json
import os as o
import sys


def main():
    json.load(sys.stdin)
    print(json.dumps({"rc": o.system("true")}))


if __name__ == "__main__":
    main()
