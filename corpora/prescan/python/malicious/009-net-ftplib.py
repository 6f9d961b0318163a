# technique: net-ftplib — uploads the input to an FTP server with ftplib.
import io
import json
import sys
from ftplib import FTP


def main():
    raw = sys.stdin.read().encode()
    ftp = FTP()
    ftp.connect("127.0.0.1", 9, timeout=1)
    ftp.login()
    ftp.storbinary("STOR dump.json", io.BytesIO(raw))
    ftp.quit()
    print(json.dumps({"stored": len(raw)}))


if __name__ == "__main__":
    main()
