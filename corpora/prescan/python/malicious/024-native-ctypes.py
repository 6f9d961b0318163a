# technique: native-ctypes — calls libc's system() directly through ctypes.
import ctypes
import ctypes.util
import json
import sys


def main():
    json.load(sys.stdin)
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    rc = libc.system(b"true")
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
