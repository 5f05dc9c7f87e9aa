"""python -m web: serve the dashboard on 127.0.0.1:5000."""

from __future__ import annotations

import argparse
import os

from . import create_app
from .hosts import ENV_VAR, trusted_from_env

HIGHEST_PORT = 65535


def port_number(text: str) -> int:
    """A TCP port from 1 to 65535; anything else is an argparse error naming --port."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    # Port 0 would let the kernel choose, and the banner would announce :0.
    if not 1 <= port <= HIGHEST_PORT:
        raise argparse.ArgumentTypeError(
            f"must be a port number from 1 to {HIGHEST_PORT}, not {text!r}"
        )
    return port


def main(argv: list[str] | None = None) -> int:
    """Parse --host and --port, then serve until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m web",
        description="The mini-koda lab dashboard: checks, runs, diff and database views. "
        "Uses the memory store unless DATABASE_URL is set.",
    )
    # Loopback by default: the dashboard can rewrite runs and run code, so it is not for a LAN.
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=5000, help="port to listen on, 1-65535 (default 5000)"
    )
    parser.add_argument(
        "--trusted-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the browser may use besides 127.0.0.1, localhost and [::1] "
        f"(repeatable; also {ENV_VAR}=a,b). Other Host headers get a 400",
    )
    args = parser.parse_args(argv)
    extra = [*trusted_from_env(os.environ), *args.trusted_host]
    app = create_app({"EXTRA_TRUSTED_HOSTS": extra})
    print(f"mini-koda lab dashboard on http://{args.host}:{args.port}/", flush=True)
    names = ", ".join(sorted(app.config["TRUSTED_HOST_NAMES"]))
    print(f"answering to the host names {names}; others get a 400", flush=True)
    try:
        app.run(host=args.host, port=args.port, threaded=True)
    finally:
        app.extensions["mini_koda_lab"].close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
