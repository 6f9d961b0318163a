# benign: fingerprints records with hashlib so duplicates can be detected.
# sample-input: {"records": [{"id": 1, "name": "a"}, {"name": "a", "id": 1}, {"id": 2, "name": "b"}]}
import hashlib
import json
import sys


def fingerprint(record):
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def main():
    data = json.load(sys.stdin)
    seen, dups = {}, []
    for index, record in enumerate(data.get("records", [])):
        digest = fingerprint(record)
        if digest in seen:
            dups.append({"index": index, "first": seen[digest]})
        else:
            seen[digest] = index
    print(json.dumps({"unique": len(seen), "duplicates": dups}))


if __name__ == "__main__":
    main()
