"""python -m <tree>: serve the gateway; with SELFTEST=1, run the lab kit's six checks on it."""

import importlib.util
import os
import sys
from pathlib import Path


def main() -> int:
    """Serve on HOST:PORT (127.0.0.1:3000), or hand over to `python -m labs selftest`."""
    if os.environ.get("SELFTEST") == "1":  # the checks are the kit's program, not this tree's
        if importlib.util.find_spec("labs") is None:
            print("error: SELFTEST=1 needs the lab kit: run `pip install -e .`", file=sys.stderr)
            return 2
        argv = [sys.executable, "-m", "labs", "selftest", str(Path(__file__).parent)]
        os.execv(sys.executable, argv)
    from .gateway import create_app
    from .shared import errors

    port = os.environ.get("PORT", "3000")
    if not port.isdigit() or not 0 < int(port) < 65536:
        print(f"error: PORT must be a number from 1 to 65535, not {port!r}", file=sys.stderr)
        return 2
    try:
        app = create_app()
    except errors.StoreConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    # Flask's own server, for the lab; production runs `gunicorn '<tree>.gateway:create_app()'`.
    app.run(host=os.environ.get("HOST", "127.0.0.1"), port=int(port), threaded=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
