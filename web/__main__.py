"""python -m web: serve the dashboard on 127.0.0.1:5000.

What it prints is in the terminal's language (LAB_LANG, LANG...), as the lab
kit's commands; the pages speak each browser's own.
"""

from __future__ import annotations

import argparse
import os

from labs.commands.api import LabArgumentParser, argparse_speaks_lab_language
from labs.term.i18n import _
from labs.version import version_text

from .app import create_app
from .safety.hosts import ENV_VAR, trusted_from_env

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
            _("must be a port number from 1 to {highest}, not {text}").format(
                highest=HIGHEST_PORT, text=repr(text)
            )
        )
    return port


def main(argv: list[str] | None = None) -> int:
    """Parse --host and --port, then serve until interrupted."""
    argparse_speaks_lab_language()
    parser = LabArgumentParser(
        prog="python -m web",
        description=_(
            "The mini-koda lab dashboard: checks, runs, diff and database views. "
            "Uses the memory store unless DATABASE_URL is set."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=version_text(),
        # Python 3.11's argparse words this help before any catalog is asked.
        help=_("show program's version number and exit"),
    )
    # Loopback by default: the dashboard can rewrite runs and run code, so it is not for a LAN.
    parser.add_argument(
        "--host", default="127.0.0.1", help=_("address to bind (default 127.0.0.1)")
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=5000,
        help=_("port to listen on, 1-65535 (default 5000)"),
    )
    parser.add_argument(
        "--trusted-host",
        action="append",
        default=[],
        metavar="NAME",
        help=_(
            "a host name the browser may use besides 127.0.0.1, localhost and [::1] "
            "(repeatable; also {variable}=a,b). Other Host headers get a 400"
        ).format(variable=ENV_VAR),
    )
    args = parser.parse_args(argv)
    extra = [*trusted_from_env(os.environ), *args.trusted_host]
    app = create_app({"EXTRA_TRUSTED_HOSTS": extra})
    url = f"http://{args.host}:{args.port}/"
    print(_("mini-koda lab dashboard on {url}").format(url=url), flush=True)
    names = ", ".join(sorted(app.config["TRUSTED_HOST_NAMES"]))
    print(
        _("answering to the host names {names}; others get a 400").format(names=names), flush=True
    )
    try:
        app.run(host=args.host, port=args.port, threaded=True)
    finally:
        app.extensions["mini_koda_lab"].close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
