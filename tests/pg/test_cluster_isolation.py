"""A throwaway cluster trusts its owner, so nobody else on the machine may reach it."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator

import pytest

from labs.pg.cluster import Autocommit
from tests.support.pgcluster import TempCluster

NOT_ROOT = "a second OS user can only be created as root (CI runs as root)"


@pytest.fixture
def neighbour() -> Iterator[str]:
    """A second local OS user, created for this test and removed after it."""
    if os.geteuid() != 0:
        pytest.skip(NOT_ROOT)
    name = f"koda-nb-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


def psql(cluster: TempCluster, host: str, *, as_user: str | None = None) -> str:
    """Run `SELECT current_user` through psql at host; return what it printed, or the error."""
    command = [
        str(cluster.bindir / "psql"),
        "-X",
        "-w",  # never prompt: a password request counts as a refusal
        "-At",
        "-h",
        host,
        "-p",
        str(cluster.port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-c",
        "SELECT current_user",
    ]
    if as_user is not None:
        command = ["runuser", "-u", as_user, "--", *command]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=30, env={"PATH": os.environ["PATH"]}
    )
    return done.stdout.strip() if done.returncode == 0 else f"refused: {done.stderr.strip()}"


def test_the_cluster_listens_on_no_tcp_address(pg_cluster: TempCluster) -> None:
    """listen_addresses is empty: the server opens no TCP socket at all."""
    with Autocommit(pg_cluster.url()) as cursor:
        cursor.execute("SHOW listen_addresses")
        row = cursor.fetchone()
    assert row == ("",)


def test_the_socket_directory_is_private_to_the_cluster_owner(pg_cluster: TempCluster) -> None:
    """Only the owner may enter the directory that holds the socket (mode 0700)."""
    mode = pg_cluster.socket_dir.stat().st_mode & 0o777
    assert mode == 0o700, oct(mode)
    assert str(pg_cluster.socket_dir) in pg_cluster.url()


@pytest.mark.skipif(shutil.which("runuser") is None, reason="runuser (util-linux) is missing")
def test_a_second_local_user_cannot_connect_by_socket_or_tcp(
    pg_cluster: TempCluster, neighbour: str
) -> None:
    """The test's own user gets in through the socket; another user gets in by no route."""
    assert psql(pg_cluster, str(pg_cluster.socket_dir)) == "postgres"
    for host in (str(pg_cluster.socket_dir), "127.0.0.1", "localhost"):
        answer = psql(pg_cluster, host, as_user=neighbour)
        assert answer.startswith("refused: "), f"{neighbour} connected via {host}: {answer}"
