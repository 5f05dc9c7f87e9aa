"""python -m web: serve the dashboard on 127.0.0.1:5000."""

from __future__ import annotations

import argparse

from . import create_app


def main(argv: list[str] | None = None) -> int:
    """Parse --host and --port, then serve until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m web",
        description="The mini-koda lab dashboard: checks, runs, diff and database views. "
        "Uses the memory store unless DATABASE_URL is set.",
    )
    # Loopback by default: the dashboard can rewrite runs and run code, so it is not for a LAN.
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5000, help="port to listen on (default 5000)")
    args = parser.parse_args(argv)
    app = create_app()
    print(f"mini-koda lab dashboard on http://{args.host}:{args.port}/", flush=True)
    try:
        app.run(host=args.host, port=args.port, threaded=True)
    finally:
        app.extensions["mini_koda_lab"].close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
