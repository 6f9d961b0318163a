# technique: signal-pidfd — signals a process through signal.pidfd_send_signal (signal 0 here).
import json
import os
import signal
import sys


def main():
    json.load(sys.stdin)
    fd = os.pidfd_open(os.getppid())
    signal.pidfd_send_signal(fd, 0)
    os.close(fd)
    print(json.dumps({"signalled": True}))


if __name__ == "__main__":
    main()
