"""`python -m web`: the options are checked before anything is served."""

from __future__ import annotations

import pytest
from flask import Flask

from web.__main__ import main


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the ports Flask would serve on, instead of serving."""
    ports: list[int] = []
    monkeypatch.setattr(Flask, "run", lambda self, **options: ports.append(options["port"]))
    return ports


@pytest.mark.parametrize("port", ["0", "99999", "-1", "http"])
def test_a_port_outside_1_to_65535_is_refused_naming_the_option(
    served: list[int], capsys: pytest.CaptureFixture[str], port: str
) -> None:
    """argparse exits with status 2, naming --port and the range, and nothing is served."""
    with pytest.raises(SystemExit) as exit_:
        main(["--port", port])
    said = capsys.readouterr()
    assert exit_.value.code == 2 and served == []
    assert "--port" in said.err and "1 to 65535" in said.err and port in said.err
    assert "dashboard on" not in said.out


@pytest.mark.parametrize("port", ["1", "5001", "65535"])
def test_a_port_in_range_is_announced_and_served(
    served: list[int], capsys: pytest.CaptureFixture[str], port: str
) -> None:
    """The announced port is the port served on."""
    assert main(["--port", port]) == 0
    assert served == [int(port)]
    assert f"http://127.0.0.1:{port}/" in capsys.readouterr().out
