"""A stand-in tree host for the sandbox's launcher tests: `python -m labs.checking.host`.

It answers each JSON request line with what it can see of its own process
(its uid, its environment, whether it reaches the network), and on request
leaves a daemon behind (double fork and setsid) that keeps touching a file,
the way a hostile tree would try to outlive its grading.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import socket
import time


def daemon(heartbeat: str) -> None:
    """Fork twice, leave the session, and touch heartbeat for as long as it lives."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                with open(heartbeat, "w", encoding="utf-8") as beat:
                    beat.write(str(time.time()))
                time.sleep(0.05)
        os._exit(0)


def network() -> bool:
    """Whether a TCP connection to a public address can even be attempted."""
    try:
        socket.create_connection(("192.0.2.1", 9), timeout=0.2).close()
    except OSError as error:
        return error.errno != errno.ENETUNREACH
    return True


def main() -> None:
    """Serve requests until the grader closes the pipe."""
    parser = argparse.ArgumentParser()
    for option in ("--tree", "--store", "--package", "--schema"):
        parser.add_argument(option)
    parser.add_argument("--database-url-fd", type=int)
    parser.add_argument("--requests-fd", type=int, required=True)
    parser.add_argument("--answers-fd", type=int, required=True)
    args = parser.parse_args()
    url = ""
    if args.database_url_fd is not None:
        with os.fdopen(args.database_url_fd, "rb") as pipe:
            url = pipe.read().decode()
    with (
        os.fdopen(args.requests_fd, "rb") as requests,
        os.fdopen(args.answers_fd, "wb") as answers,
    ):
        for line in requests:
            request = json.loads(line)
            if "spawn" in request:
                daemon(request["spawn"])
            answer = {
                "uid": os.getuid(),
                "env": sorted(os.environ),
                "database_url": os.environ.get("DATABASE_URL", ""),
                "piped_url": url,
                "network": network(),
                "tree_files": sorted(os.listdir(args.tree)),
                "home_mode": oct(os.stat(os.environ["HOME"]).st_mode & 0o777),
            }
            answers.write(json.dumps(answer).encode() + b"\n")
            answers.flush()


if __name__ == "__main__":
    main()
