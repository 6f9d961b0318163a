# technique: dyn-code-interpreter — runs source text through code.InteractiveInterpreter.runsource.
import code
import json
import sys


def main():
    data = json.load(sys.stdin)
    interp = code.InteractiveInterpreter({})
    interp.runsource(data.get("snippet", "answer = 6 * 7"))
    print(json.dumps({"answer": interp.locals.get("answer")}))


if __name__ == "__main__":
    main()
