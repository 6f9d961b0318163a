import json
import sys
import textwrap

data = json.load(sys.stdin)
text = data["text"]
width = data.get("width", 30)
print(json.dumps({
    "lines": textwrap.wrap(text, width=width),
    "indented": textwrap.indent(textwrap.fill(text, width=width), "> "),
    "short": textwrap.shorten(text, width=40, placeholder=" [...]"),
}))
