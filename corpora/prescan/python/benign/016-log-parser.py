# benign: parses syslog lines from systemd and sshd; messages contain the words exec and socket.
# sample-input: {"lines": ["Nov 30 04:00:01 host systemd[1]: Started exec helper.", "Nov 30 04:00:02 host sshd[42]: Accepted key for ops", "Nov 30 04:00:03 host systemd[1]: Listening on socket dbus.socket."]}
import json
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^(?P<month>\w{3}) +(?P<day>\d+) (?P<time>[\d:]+) (?P<host>\S+) (?P<unit>[\w.-]+)(?:\[(?P<pid>\d+)\])?: (?P<msg>.*)$")


def main():
    data = json.load(sys.stdin)
    by_unit = defaultdict(list)
    unparsed = 0
    for raw in data.get("lines", []):
        match = LINE.match(raw)
        if not match:
            unparsed += 1
            continue
        by_unit[match["unit"]].append(match["msg"])
    print(json.dumps({"units": {k: len(v) for k, v in by_unit.items()}, "unparsed": unparsed, "messages": by_unit}))


if __name__ == "__main__":
    main()
