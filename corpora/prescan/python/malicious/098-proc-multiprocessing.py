# technique: proc-multiprocessing — forks worker processes with multiprocessing.Process.
import json
import multiprocessing
import sys


def work(n):
    return n * n


def main():
    data = json.load(sys.stdin)
    proc = multiprocessing.Process(target=work, args=(len(data),))
    proc.start()
    proc.join()
    print(json.dumps({"exitcode": proc.exitcode}))


if __name__ == "__main__":
    main()
