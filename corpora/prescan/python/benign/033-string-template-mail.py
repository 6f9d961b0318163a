# benign: fills a message template with string.Template.safe_substitute.
# sample-input: {"template": "Hello $name, your $plan plan renews on $date.", "values": {"name": "Ada", "plan": "pro"}}
import json
import string
import sys


def main():
    data = json.load(sys.stdin)
    template = string.Template(data.get("template", ""))
    values = {k: str(v) for k, v in data.get("values", {}).items()}
    text = template.safe_substitute(values)
    missing = sorted({m.group("named") for m in template.pattern.finditer(template.template) if m.group("named") and m.group("named") not in values})
    print(json.dumps({"text": text, "missing": missing}))


if __name__ == "__main__":
    main()
