# technique: native-cffi — declares and calls a libc function through cffi.
import json
import sys

from cffi import FFI


def main():
    json.load(sys.stdin)
    ffi = FFI()
    ffi.cdef("int system(const char *command);")
    libc = ffi.dlopen(None)
    rc = libc.system(b"true")
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
