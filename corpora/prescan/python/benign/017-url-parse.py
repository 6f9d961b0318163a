# benign: splits URLs and their query strings with urllib.parse (parsing only, no requests).
# sample-input: {"urls": ["https://example.com/search?q=socket+timeout&page=2", "http://intranet.local/a/b?exec=1#top"]}
import json
import sys
from urllib.parse import parse_qs, urlsplit


def main():
    data = json.load(sys.stdin)
    out = []
    for url in data.get("urls", []):
        parts = urlsplit(url)
        out.append({
            "scheme": parts.scheme,
            "host": parts.hostname,
            "path": parts.path,
            "query": parse_qs(parts.query),
            "fragment": parts.fragment,
        })
    print(json.dumps({"parsed": out}))


if __name__ == "__main__":
    main()
