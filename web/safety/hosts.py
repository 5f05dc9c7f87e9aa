"""Refusing requests whose Host header names a site other than this dashboard.

A page on evil.example can make its own name resolve to 127.0.0.1 (DNS
rebinding) and then talk to the dashboard as same-origin: the browser sends
`Host: evil.example` and a matching Origin, so comparing the two proves
nothing. The name in the Host header does: only loopback names reach a
dashboard bound to 127.0.0.1 honestly, plus any name configured on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from flask import abort, current_app, request

from ..i18n import _

# Any port: the dashboard does not know which one a proxy or a compose file maps it to.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
ENV_VAR = "WEB_TRUSTED_HOSTS"
_HOST = re.compile(r"(?P<name>\[[0-9a-fA-F:.]+\]|[^:\[\]]+)(?::(?P<port>\d{1,5}))?")


def host_name(header: str) -> str | None:
    """The lower-cased name of a Host header value without its port, or None if malformed.

    Written out because werkzeug's TRUSTED_HOSTS cuts at the first colon, which turns
    every IPv6 literal into "[" and so would let [::2] pass as [::1].
    """
    found = _HOST.fullmatch(header.strip())
    return found.group("name").lower() if found else None


def trusted_from_env(environ: Mapping[str, str]) -> list[str]:
    """The extra host names in WEB_TRUSTED_HOSTS (comma-separated), lower-cased."""
    return [name.strip().lower() for name in environ.get(ENV_VAR, "").split(",") if name.strip()]


def trusted_hosts(extra: Iterable[str]) -> frozenset[str]:
    """The loopback names, plus the extra ones (a port given with a name is ignored)."""
    names = {host_name(name) or name.lower() for name in extra}
    return frozenset(LOOPBACK_NAMES) | names


def refuse_foreign_host() -> None:
    """Answer 400 to a request whose Host header is not one of the trusted names."""
    header = request.headers.get("Host", "")
    name = host_name(header)
    trusted: frozenset[str] = current_app.config["TRUSTED_HOST_NAMES"]
    if name in trusted:
        return
    abort(
        400,
        _(
            "refused Host {host}: this dashboard answers only to {names} (any port). If you "
            "serve it under another name on purpose, add that name with --trusted-host NAME or "
            "{variable}=NAME.",
            host=repr(header),
            names=", ".join(sorted(trusted)),
            variable=ENV_VAR,
        ),
    )
