# benign: redacts things that look like credentials in log text before it is stored.
# sample-input: {"text": "user=ops password=hunter2 token: abcdef123456 AKIAABCDEFGHIJKLMNOP ok"}
import json
import re
import sys

PATTERNS = [
    re.compile(r"(password\s*[=:]\s*)\S+", re.I),
    re.compile(r"(token\s*[=:]\s*)\S+", re.I),
    re.compile(r"()AKIA[0-9A-Z]{16}"),
]


def redact(text):
    hits = 0
    for pattern in PATTERNS:
        text, n = pattern.subn(lambda m: m.group(1) + "[REDACTED]", text)
        hits += n
    return text, hits


def main():
    data = json.load(sys.stdin)
    text, hits = redact(data.get("text", ""))
    print(json.dumps({"text": text, "redactions": hits}))


if __name__ == "__main__":
    main()
