# benign: formats release notes with textwrap; one note mentions the subprocess module by name.
# sample-input: {"width": 40, "notes": ["Removed the subprocess fallback from the exporter; it now uses the library API directly.", "Fixed the socket timeout documentation."]}
import json
import sys
import textwrap


def main():
    data = json.load(sys.stdin)
    width = int(data.get("width", 60))
    blocks = []
    for number, note in enumerate(data.get("notes", []), start=1):
        body = textwrap.fill(note, width=width, initial_indent=f"{number}. ", subsequent_indent="   ")
        blocks.append(body)
    text = "\n".join(blocks)
    print(json.dumps({"text": text, "lines": text.count("\n") + 1 if text else 0}))


if __name__ == "__main__":
    main()
