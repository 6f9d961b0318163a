import json
import sys


def main():
    request = json.load(sys.stdin)
    rows = request.get("data", [])
    query = request.get("query", "")
    print(json.dumps({"answer": f"Processed {len(rows)} rows for: {query}"}))


if __name__ == "__main__":
    main()
