"""Clients that trickle their bytes cannot starve the gateway behind nginx.

gunicorn's gthread workers give a connection a thread while its request
arrives; nginx (deploy/nginx/gateway.conf.template) reads each request whole
first, so many slow clients tie up nginx's cheap connections, never gunicorn's
threads. `python -m tests.support.slowclients` shows the same clients
starving gunicorn when nothing stands in front of it.
"""

from __future__ import annotations

import pytest

from tests.conftest import IN_CI
from tests.support.servers import NGINX, Nginx, deployed_gateway
from tests.support.slowclients import SlowClients, probe

# A bound on how long the test waits for an answer, so a starved gateway fails the
# test instead of hanging it; answers behind nginx come back in milliseconds.
NO_ANSWER_AFTER = 30.0


@pytest.fixture(autouse=True)
def nginx_installed() -> None:
    """Skip without the nginx binary, except in CI, where it is required (.ci/run installs it)."""
    if not NGINX.exists():
        if IN_CI:
            pytest.fail(f"CI requires nginx, but {NGINX} is missing")
        pytest.skip(f"{NGINX} is missing: `apt-get install nginx` to run the slow-client tests")


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_healthz_and_chat_answer_while_four_times_the_threads_trickle_through_nginx(
    tree: str,
) -> None:
    """Slow connections four times gunicorn's thread count: /healthz, sessions and chat answer."""
    with (
        deployed_gateway(tree) as gunicorn,
        Nginx(gunicorn.port) as nginx,
        SlowClients(nginx.port, 4 * gunicorn.threads) as slow,
    ):
        slow.wait_for_rounds(3)
        answered = probe(nginx.port, timeout=NO_ANSWER_AFTER)
        still_trickling = len(slow.sockets)
    assert answered.statuses == [200, 201, 202], answered.line()
    assert still_trickling == 4 * gunicorn.threads, "the slow clients were cut off early"
    print(f"\n{tree} behind nginx, {still_trickling} slow clients: {answered.line()}")
