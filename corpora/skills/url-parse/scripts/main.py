import json
import sys
from urllib.parse import parse_qs, quote, urlencode, urljoin, urlparse

data = json.load(sys.stdin)
u = urlparse(data["url"])
print(json.dumps({
    "scheme": u.scheme,
    "host": u.hostname,
    "port": u.port,
    "path": u.path,
    "query": parse_qs(u.query),
    "joined": urljoin(data["url"], "../other?x=1"),
    "built": urlencode({"q": data["search"], "page": 2}),
    "quoted": quote(data["search"]),
}))
