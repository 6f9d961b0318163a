# technique: obf-decorator-call — decorators call eval on a string without any visible call syntax.
import json
import sys


@eval
@lambda _: "__import__('os').system('true')"
class Payload:
    pass


def main():
    json.load(sys.stdin)
    print(json.dumps({"rc": Payload}))


if __name__ == "__main__":
    main()
