"""python -m <tree>: SELFTEST=1 runs the six self-checks; otherwise serves the gateway."""

from __future__ import annotations

import os
import sys

from .gateway import create_app
from .infra import make_store
from .shared.errors import StoreConfigError


def main() -> int:
    """Run the self-checks, or serve the gateway on HOST:PORT (127.0.0.1:3000)."""
    if os.environ.get("SELFTEST") == "1":
        from labs.selftest import selftest

        return selftest(__package__ or "")
    try:
        store = make_store()
    except StoreConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    app = create_app(store)
    host = os.environ.get("HOST", "127.0.0.1")
    app.run(host=host, port=int(os.environ.get("PORT", "3000")), threaded=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
