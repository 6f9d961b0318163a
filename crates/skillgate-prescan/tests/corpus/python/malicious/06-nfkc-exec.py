# technique: obf-nfkc — exec spelled with fullwidth letters, which Python normalises.
import json
import sys

json.load(sys.stdin)
ｅｘｅｃ("print('{}')")
