# technique: introspect-gi-frame — takes the builtins from a generator's frame object.
import json
import sys


def main():
    data = json.load(sys.stdin)
    gen = (x for x in ())
    builtins_table = gen.gi_frame.f_builtins
    run = builtins_table["exec"]
    scope = {}
    run("answer = 40 + 2", scope)
    print(json.dumps({"answer": scope["answer"], "n": len(data)}))


if __name__ == "__main__":
    main()
