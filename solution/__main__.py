"""python -m <tree>: SELFTEST=1 runs the six self-checks; otherwise serves the gateway."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> int:
    """Run the self-checks, or serve the gateway on HOST:PORT (127.0.0.1:3000)."""
    if os.environ.get("SELFTEST") == "1":
        # The lab kit runs the checks and starts this tree in a process of its own,
        # so nothing of the tree is imported here.
        from labs.checking.selftest import selftest

        return selftest(Path(__file__).resolve().parent)
    from .gateway import create_app
    from .infra import make_store
    from .shared.errors import StoreConfigError
    from .shared.say import _

    port = os.environ.get("PORT", "3000")
    if not port.isdigit() or not 0 < int(port) < 65536:
        print(
            _("error: PORT must be a number from 1 to 65535, not {port}").format(port=repr(port)),
            file=sys.stderr,
        )
        return 2
    try:
        store = make_store()
    except StoreConfigError as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    # Flask's own server, for the lab; production runs gateway/wsgi.py under gunicorn.
    app = create_app(store)
    app.run(host=os.environ.get("HOST", "127.0.0.1"), port=int(port), threaded=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
