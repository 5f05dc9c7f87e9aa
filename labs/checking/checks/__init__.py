"""The six self-checks of the day-8 lab, one module each, in their order.

Each check drives a tree only through its host (host.py): the gateway's HTTP
answers, the store's methods, the key, the statuses and the worker's query.
Where a check stands for a rule it tests the rule, not one sample, with
inputs drawn from the run's seed. A failing check raises CheckFailedError
with what it expected, what it got, and the TODO(check N) line to edit.
"""

from __future__ import annotations

from ..definition import Check
from . import grains, idempotency, intake, moves, order, worker

CHECKS: list[Check] = [
    intake.gateway_intake,
    grains.three_grains,
    idempotency.idempotency,
    moves.state_machine,
    order.message_order,
    worker.worker_sees_pending,
]

__all__ = ["CHECKS", "Check"]
