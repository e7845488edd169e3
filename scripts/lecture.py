"""Start the app in lecture mode, as Jupyter starts with its token: a new teacher key, the teacher's link printed
here (open it once, on the projector's computer), and the address the students' devices will reach.

    python scripts/lecture.py [--port 8501] [--address 0.0.0.0] [--public-url http://10.0.0.5:8501]

The key is $TRANSFORMER_TEACHER_KEY if it is set (keep the same one across restarts), else a new random one. The
students' join link and QR code use --public-url, else this machine's address on its network (found by asking the
system which interface would reach another network, with no packet sent).
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lan_address() -> str:
    """This machine's address on its local network ("127.0.0.1" when it has none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.254.254.254", 1))  # UDP connect: chooses a route, sends nothing
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8501)
    ap.add_argument("--address", default="0.0.0.0", help="where the server listens (default: every interface)")
    ap.add_argument("--public-url", default=None, help="the address students open (default: this machine's)")
    args = ap.parse_args()
    key = os.environ.get("TRANSFORMER_TEACHER_KEY", "").strip() or secrets.token_urlsafe(16)
    public = (args.public_url or f"http://{lan_address()}:{args.port}").rstrip("/")
    print(f"Teacher (open once, then the key leaves the address bar): http://localhost:{args.port}/?teacher={key}")
    print(f"Students: {public}  (the projector shows the join code and a QR code once a lecture is open)")
    sys.stdout.flush()
    env = {**os.environ, "TRANSFORMER_TEACHER_KEY": key, "TRANSFORMER_PUBLIC_URL": public}
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(args.port)]
    command += ["--server.address", args.address]
    os.chdir(ROOT)
    os.execvpe(sys.executable, command, env)


if __name__ == "__main__":
    main()
