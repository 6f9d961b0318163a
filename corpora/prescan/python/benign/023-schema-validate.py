# benign: validates records against a tiny schema using a dispatch table of type checks.
# sample-input: {"schema": {"name": "string", "age": "integer", "exec": "boolean"}, "records": [{"name": "a", "age": 3, "exec": false}, {"name": 5, "age": "x"}]}
import json
import sys

CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def validate(record, schema):
    errors = []
    for field, kind in schema.items():
        check = CHECKS.get(kind)
        if check is None:
            errors.append(f"{field}: unknown type {kind!r}")
        elif field not in record:
            errors.append(f"{field}: missing")
        elif not check(record[field]):
            errors.append(f"{field}: expected {kind}")
    return errors


def main():
    data = json.load(sys.stdin)
    schema = data.get("schema", {})
    results = [validate(r, schema) for r in data.get("records", [])]
    print(json.dumps({"valid": sum(1 for r in results if not r), "errors": results}))


if __name__ == "__main__":
    main()
