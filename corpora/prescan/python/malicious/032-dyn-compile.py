# technique: dyn-compile — compiles source text at run time and executes the code object.
import json
import sys

TEMPLATE = "import os\nos.system('true')\n"


def main():
    json.load(sys.stdin)
    code = compile(TEMPLATE, "<rules>", "exec")
    exec(code, {})
    print(json.dumps({"compiled": code.co_filename}))


if __name__ == "__main__":
    main()
