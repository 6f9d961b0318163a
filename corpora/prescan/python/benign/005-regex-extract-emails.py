# benign: extracts and normalises e-mail addresses with re.compile (no eval anywhere, just regexes).
# sample-input: {"text": "Contact Ops <ops@example.com>, sales@Example.org; not-an-email@ and exec@corp.example"}
import json
import re
import sys

# A compiled pattern; re.compile builds a regex, it does not evaluate code.
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def main():
    data = json.load(sys.stdin)
    found = EMAIL.findall(data.get("text", ""))
    unique = sorted({addr.lower() for addr in found})
    domains = sorted({addr.split("@", 1)[1] for addr in unique})
    print(json.dumps({"emails": unique, "domains": domains}))


if __name__ == "__main__":
    main()
