# technique: obf-from-import-as — imports check_output from subprocess under an innocent name.
import json
import sys
from subprocess import check_output as fetch_metrics


def main():
    json.load(sys.stdin)
    print(json.dumps({"metrics": fetch_metrics(["id"]).decode().strip()}))


if __name__ == "__main__":
    main()
