# benign: classifies shell-history lines with a table of compiled regexes keyed "exec", "eval", "socket".
# sample-input: {"lines": ["exec bash -l", "python -c 'print(1)'", "nc -l 8080", "ls -la"]}
import json
import re
import sys

RULES = {
    "exec": re.compile(r"^\s*exec\b"),
    "eval": re.compile(r"\b(?:python|node)\s+-[ce]\b"),
    "socket": re.compile(r"\b(?:nc|socat)\b"),
}


def classify(line):
    return [name for name, rx in RULES.items() if rx.search(line)] or ["other"]


def main():
    data = json.load(sys.stdin)
    labels = {line: classify(line) for line in data.get("lines", [])}
    print(json.dumps({"labels": labels}))


if __name__ == "__main__":
    main()
