# benign: extracts dates with re.compile and formats them with datetime.
import json
import re
import sys
from datetime import datetime

PATTERN = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
text = json.load(sys.stdin).get("text", "")
dates = [datetime(int(y), int(m), int(d)).strftime("%d %b %Y") for y, m, d in PATTERN.findall(text)]
print(json.dumps({"dates": dates}))
