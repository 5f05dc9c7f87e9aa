"""Sending messages through a tree's gateway, the way a client (or a retrying one) would."""

from __future__ import annotations

import uuid
from typing import Any

from labs.checking.api import RefusedError
from labs.lesson import RunStatus
from labs.term.i18n import N_

from ..i18n import Sentence, Verbatim
from .journal import Action, AttemptOutcome, Entry, Journal
from .outcome import Outcome, Tone
from .remote_store import mirrored
from .sent_runs import SentRuns
from .tree_link import TreeLink


class SessionRefusedError(Exception):
    """POST /sessions did not answer 201: the bench has no session to send messages in.

    A database that is down is the usual cause; the views show it like a store that
    stopped answering, in the page's language (sentence), the gateway's words as they are.
    """

    def __init__(self, status: int, said: str) -> None:
        self.status = status
        self.said = said
        super().__init__(f"POST /sessions answered {status}: {said}")

    @property
    def sentence(self) -> Sentence:
        """What happened, worded by the page that shows it."""
        return Sentence(
            N_("POST /sessions answered {status}: {said}"),
            status=self.status,
            said=Verbatim(self.said),
        )


class GatewayClient(SentRuns):
    """The gateway side of a bench: POST /sessions and POST /chat through the tree's app.

    The app runs in the tree's host (link): each request is one `http` request
    of the host protocol, a burst one `burst` request, its copies on as many
    threads in the host.
    """

    name: str
    link: TreeLink
    journal: Journal
    _session_id: str | None
    session_not_found: type[Exception]  # the tree's SessionNotFoundError, as mirrored

    last: Outcome | None
    restarted: Sentence  # when the tree's host was started again, and what it lost

    def _remember(self, outcome: Outcome) -> Outcome:
        self.last = outcome
        return outcome

    @staticmethod
    def _answer(value: object) -> tuple[int, dict[str, Any], bool, str]:
        """An http answer from the host: status, JSON body ({} if none), replayed, text."""
        fields = value if isinstance(value, dict) else {}
        status, body = fields.get("status"), fields.get("json")
        return (
            status if isinstance(status, int) else 0,
            body if isinstance(body, dict) else {},
            fields.get("replayed") is True,
            str(fields.get("text", "")),
        )

    def _post(self, path: str, body: dict[str, str]) -> tuple[int, dict[str, Any], bool, str]:
        return self._answer(self.link.call("http", method="POST", path=path, body=body))

    def _post_chat(self, body: dict[str, str]) -> tuple[int, dict[str, Any], bool]:
        status, answer, replayed, _text = self._post("/chat", body)
        return status, answer, replayed

    def _session(self) -> str:
        with self._lock:
            if self._session_id is not None and not self._session_exists(self._session_id):
                self._session_id = None  # it left with the database's rows: open a new one
            if self._session_id is None:
                status, body, _replayed, text = self._post(
                    "/sessions", {"userId": "dashboard", "title": f"{self.name} bench"}
                )
                # Only a 201 carries a session id; a 503 (database down) has an error body.
                if status != 201 or "sessionId" not in body:
                    said = body.get("message", text[:200])
                    raise SessionRefusedError(status, str(said))
                self._session_id = str(body["sessionId"])
            return self._session_id

    def _session_exists(self, session_id: str) -> bool:
        try:
            self.store.get_session(session_id)
        except self.session_not_found:
            return False
        return True

    def _record_answer(
        self, body: dict[str, str], status: int, answer: dict[str, Any], replayed: bool
    ) -> str | None:
        run_id = answer.get("runId")
        if status != 202 or not run_id:
            return None
        first = None
        with self._lock:
            self._requests.setdefault(run_id, body)
            if not replayed:  # a new run: the notices about runs that left have been seen
                self._dropped = 0
                self.restarted = Sentence()
                first = self._first_run_of(body, run_id)
                if first:
                    self.duplicate_of[run_id] = first
        if replayed:
            outcome, detail = (
                AttemptOutcome.REPLAYED,
                N_("same request again: the existing run came back"),
            )
        elif first:
            outcome, detail = AttemptOutcome.DUPLICATE, N_("same request again: a second run")
        else:
            outcome, detail = AttemptOutcome.ACCEPTED, N_("new run")
        self.journal.add(
            Entry(
                run_id,
                "gateway",
                Action.CREATE,
                outcome,
                Sentence(detail),
                target=RunStatus.PENDING,
                duplicates=first,
            )
        )
        return str(run_id)

    def _first_run_of(self, body: dict[str, str], run_id: str) -> str | None:
        """The first other run sent for body's clientMessageId in its session (lock held)."""
        client_id = body.get("clientMessageId")
        if not client_id:
            return None  # without a key, the same text twice is two messages
        return next(
            (
                other
                for other, sent in self._requests.items()
                if other != run_id
                and sent.get("clientMessageId") == client_id
                and sent.get("sessionId") == body["sessionId"]
            ),
            None,
        )

    def send(self, message: str, client_message_id: str, fail: bool) -> Outcome:
        """POST /chat once; fail marks the run for the demo executor to fail.

        A clientMessageId this bench already sent in the session is a retry: if it makes
        a new run instead of bringing the first one back, the outcome says so.
        """
        body = {"sessionId": self._session(), "message": message}
        if client_message_id:
            body["clientMessageId"] = client_message_id
        status, answer, replayed = self._post_chat(body)
        run_id = self._record_answer(body, status, answer, replayed)
        if run_id is None:
            return self._remember(Outcome(Tone.REFUSED, self._refusal(status, answer)))
        if fail:
            self.will_fail.add(run_id)
        if replayed:
            return self._remember(
                Outcome(
                    Tone.REPLAY,
                    Sentence(
                        N_("202: the existing run {run_id} came back (nothing inserted)"),
                        run_id=run_id,
                    ),
                )
            )
        first = self.duplicate_of.get(run_id)
        if first:
            return self._remember(
                Outcome(
                    Tone.WARN,
                    Sentence(
                        N_(
                            "202: a NEW run {run_id}, though clientMessageId {client_id} "
                            "already made run {earlier}: the retry was not recognised"
                        ),
                        run_id=run_id,
                        client_id=repr(client_message_id),
                        earlier=first,
                    ),
                )
            )
        return self._remember(
            Outcome(Tone.OK, Sentence(N_("202: created run {run_id}"), run_id=run_id))
        )

    def send_again(self, run_id: str) -> Outcome:
        """Repeat the exact request that created run_id, as a client retry would."""
        self.stored_run(run_id)  # a retry of a run the database lost would make a new one
        body = self._request_of(run_id)
        status, answer, replayed = self._post_chat(body)
        again = self._record_answer(body, status, answer, replayed)
        if again == run_id:
            return self._remember(
                Outcome(
                    Tone.REPLAY,
                    Sentence(
                        N_(
                            "same request again → same run id {run_id} (replayed, nothing inserted)"
                        ),
                        run_id=run_id,
                    ),
                )
            )
        if again is None:
            return self._remember(Outcome(Tone.REFUSED, self._refusal(status, answer)))
        return self._remember(
            Outcome(
                Tone.WARN,
                Sentence(
                    N_(
                        "same request again → a NEW run {again}: "
                        "the retry was not recognised (first was {run_id})"
                    ),
                    again=again,
                    run_id=run_id,
                ),
            )
        )

    def burst(self, message: str, copies: int) -> Outcome:
        """Send copies identical requests at once, from as many threads (in the tree's host)."""
        body = {
            "sessionId": self._session(),
            "message": message,
            "clientMessageId": f"burst-{uuid.uuid4().hex[:8]}",
        }
        call = {"op": "http", "method": "POST", "path": "/chat", "body": body}
        answers = self.link.call("burst", n=copies, call=call)
        run_ids = []
        for answer in answers if isinstance(answers, list) else []:
            fields = answer if isinstance(answer, dict) else {}
            if fields.get("ok") is not True:
                raise mirrored(RefusedError(fields.get("error")))
            status, json, replayed, _text = self._answer(fields.get("value"))
            run_ids.append(self._record_answer(body, status, json, replayed))
        distinct = {r for r in run_ids if r}
        if len(distinct) == 1:
            (run_id,) = distinct
            text = Sentence(
                N_("{copies} concurrent duplicates → {runs} run(s): all got {run_id}"),
                copies=copies,
                runs=len(distinct),
                run_id=run_id,
            )
            return self._remember(Outcome(Tone.OK, text))
        text = Sentence(
            N_("{copies} concurrent duplicates → {runs} run(s): one message became several runs"),
            copies=copies,
            runs=len(distinct),
        )
        return self._remember(Outcome(Tone.WARN, text))

    @staticmethod
    def _refusal(status: int, answer: dict[str, Any]) -> Sentence:
        """The gateway's refusal: its status, and its message in its own words."""
        said = answer.get("message", answer)
        return Sentence(
            N_("the gateway answered {status}: {said}"), status=status, said=Verbatim(str(said))
        )
