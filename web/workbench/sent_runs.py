"""The runs a bench sent, remembered with the request that made each, until the database
loses them (rows deleted, tables dropped and migrated again): then they are forgotten,
and the runs view says so in one line instead of failing."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from labs.checking.api import StoreKind

from ..i18n import _
from ..safety.forms import FormError


class SentRuns:
    """Which runs a bench sent, and which of them are gone from the database."""

    store: Any
    store_kind: str  # a StoreKind: the store the tree's host opened
    will_fail: set[str]
    run_not_found: type[Exception]  # the tree's RunNotFoundError
    _requests: dict[str, dict[str, str]]  # run id -> the body that created it
    duplicate_of: dict[str, str]  # a run made again for a request sent before -> the first run
    _lock: threading.Lock
    # Runs the database no longer holds, and how many left since the last new run.
    _gone: set[str]
    _dropped: int

    def run_ids(self) -> list[str]:
        """Runs sent from this bench and still in the database as far as it knows, newest first."""
        with self._lock:
            return list(reversed(self._requests))

    def stored_run(self, run_id: str) -> Any:
        """The run as the store holds it now; FormError if it was not sent here or is gone."""
        self._request_of(run_id)
        try:
            return self.store.get_run(run_id)
        except self.run_not_found:
            self.forget([run_id])
            raise FormError("run", gone(run_id), status=404) from None

    def forget(self, run_ids: Iterable[str]) -> None:
        """Drop runs the database no longer holds from the table, counting them for the notice."""
        with self._lock:
            for run_id in run_ids:
                if self._requests.pop(run_id, None) is not None:
                    self._gone.add(run_id)
                    self._dropped += 1
                self.will_fail.discard(run_id)

    @property
    def gone_notice(self) -> str:
        """One line about the runs that left the database since the last new run, or ''.

        On memory only a restart of the tree's process loses runs, and the bench's
        notice about the restart says so already.
        """
        count = self._dropped
        if not count or self.store_kind == StoreKind.MEMORY:
            return ""
        if count == 1:
            return _(
                "1 run sent from this bench is no longer in the database (rows deleted, or the "
                "tables dropped and migrated again): dropped from the table"
            )
        return _(
            "{count} runs sent from this bench are no longer in the database (rows deleted, "
            "or the tables dropped and migrated again): dropped from the table",
            count=count,
        )

    def _request_of(self, run_id: str) -> dict[str, str]:
        with self._lock:
            if run_id in self._gone:
                raise FormError("run", gone(run_id), status=404)
            if run_id not in self._requests:
                raise FormError(
                    "run", _("no run {run_id} was sent from this bench", run_id=repr(run_id))
                )
            return dict(self._requests[run_id])


def gone(run_id: str) -> str:
    """Why a run the bench sent cannot be shown or moved any more."""
    return _(
        "run {run_id} is no longer in the database (its rows were deleted, or the tables "
        "dropped and migrated again)",
        run_id=run_id,
    )
