import json
import re
import sys
from collections import Counter, OrderedDict, defaultdict, deque

text = json.load(sys.stdin)["text"].lower()
words = re.findall(r"[a-z']+", text)
counts = Counter(words)
by_letter = defaultdict(list)
for w in sorted(counts):
    by_letter[w[0]].append(w)
last = deque(words, maxlen=3)
print(json.dumps({
    "top": counts.most_common(3),
    "unique": len(counts),
    "by_letter": OrderedDict(sorted(by_letter.items())),
    "last_three": list(last),
}))
