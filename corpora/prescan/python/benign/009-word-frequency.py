# benign: counts word frequencies; the sample text talks about exec, system and eval as words.
# sample-input: {"text": "The exec team asked how the system handles eval requests. The system is fine.", "top": 3}
import json
import re
import sys
from collections import Counter

WORD = re.compile(r"[a-z']+")
STOP = {"the", "a", "an", "is", "how", "and", "of"}


def main():
    data = json.load(sys.stdin)
    words = [w for w in WORD.findall(data.get("text", "").lower()) if w not in STOP]
    counts = Counter(words)
    top = counts.most_common(int(data.get("top", 5)))
    print(json.dumps({"top": top, "distinct": len(counts), "total": len(words)}))


if __name__ == "__main__":
    main()
