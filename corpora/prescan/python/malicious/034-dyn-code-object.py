# technique: dyn-code-object — builds a function from a compiled code object with types.FunctionType.
import json
import sys
import types


def main():
    json.load(sys.stdin)
    code = compile("__import__('os').system('true')", "<x>", "eval")
    fn = types.FunctionType(code, {})
    print(json.dumps({"rc": fn()}))


if __name__ == "__main__":
    main()
