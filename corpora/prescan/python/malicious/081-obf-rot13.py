# technique: obf-rot13 — decodes the module name from rot13 with codecs.decode.
import codecs
import json
import sys


def main():
    json.load(sys.stdin)
    mod = __import__(codecs.decode("fhocebprff", "rot13"))
    print(json.dumps({"rc": mod.call(["true"])}))


if __name__ == "__main__":
    main()
