"""Which runs need the network, and which socket folder a sandbox must be shown."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit


def socket_folder(database_url: str | None) -> list[Path]:
    """The folder of the server's Unix socket a URL names (`?host=/path`), if it names one."""
    if not database_url or url_needs_network(database_url):
        return []
    folder = parse_qs(urlsplit(database_url).query).get("host", [""])[0]
    return [Path(folder)] if folder.startswith("/") and Path(folder).is_dir() else []


def socket_file(database_url: str | None) -> list[Path]:
    """The server's Unix socket itself (`<host>/.s.PGSQL.<port>`), if the URL names its folder."""
    folders = socket_folder(database_url)
    if not folders or not database_url:
        return []
    parts = urlsplit(database_url)
    port = parse_qs(parts.query).get("port", [""])[0]
    try:
        port = port or str(parts.port or 5432)
    except ValueError:  # not a number: libpq would refuse the URL anyway
        return []
    return [folders[0] / f".s.PGSQL.{port}"]


def url_needs_network(database_url: str | None) -> bool:
    """Whether a database URL is reached over TCP (a Unix socket, or no database, needs no
    network)."""
    if not database_url:
        return False
    parts = urlsplit(database_url)
    socket_dir = parse_qs(parts.query).get("host", [""])[0]
    return not (socket_dir.startswith("/") or (parts.hostname or "").startswith("%2f"))
