import json
import re
import sys

text = json.load(sys.stdin)["text"]
emails = sorted(set(re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text)))
dates = re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text)
amounts = [float(a.replace(",", "")) for a in re.findall(r"\$(\d[\d,]*\.?\d*)", text)]
print(json.dumps({"emails": emails, "dates": dates, "amounts": amounts, "total": round(sum(amounts), 2)}))
