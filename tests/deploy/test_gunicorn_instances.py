"""Several gunicorn masters on one machine, under one user: none reaches into another."""

from __future__ import annotations

from pathlib import Path

from tests.support.servers import deployed_gateway


def test_gateways_side_by_side_open_no_control_socket_one_could_take_from_the_other(
    tmp_path: Path,
) -> None:
    """Two gateways sharing a home directory leave no control socket there for either to take."""
    home = {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": ""}  # gunicorn's default: ~/.gunicorn/
    with deployed_gateway("solution", env=home), deployed_gateway("solution", env=home):
        sockets = [p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_socket()]
    assert sockets == [], f"control sockets in the shared home directory: {sockets}"
