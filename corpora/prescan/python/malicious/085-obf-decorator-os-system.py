# technique: obf-decorator-os-system — uses os.system as a decorator on a class whose name is built into the command.
import json
import os
import sys


@os.system
@lambda cls: "true " + cls.__name__
class Report:
    pass


def main():
    json.load(sys.stdin)
    print(json.dumps({"rc": Report}))


if __name__ == "__main__":
    main()
