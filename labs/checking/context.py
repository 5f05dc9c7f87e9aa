"""What every self-check runs in: its context, and `expect`.

A check runs in the lab kit's process and never touches the tree's objects:
it gets a CheckContext whose methods send requests to the tree host (host.py)
and return plain data. The verdict rests on those answers, and on Postgres
on what the driver's own connection reads from the tables (database.py).
Inputs come from the run's seed, so no tree can know them in advance. A
check that sees something else raises CheckFailedError (see `expect`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from labs.term.i18n import _
from labs.trees.finding import Tree
from labs.untrusted import clean_text

from .database import Database
from .errors import CheckFailedError, RefusedError
from .hints import Hint, hint_for
from .protocol import StoreKind
from .rules import ACCEPTS_MESSAGE, OPENS_SESSION, Rule
from .session import HostSession

WORDS = (
    "flight",
    "hotel",
    "invoice",
    "refund",
    "weather",
    "recipe",
    "poem",
    "summary",
    "train",
    "museum",
    "ticket",
    "garden",
    "river",
    "lamp",
    "orbit",
    "violin",
    "harbor",
    "meadow",
    "copper",
    "lantern",
)


@dataclass(frozen=True)
class Answer:
    """A gateway's answer to one HTTP request, as the host reported it."""

    status: int
    text: str
    json: Any
    replayed: bool

    def field(self, name: str) -> Any:
        """A field of the JSON body, or None."""
        return self.json.get(name) if isinstance(self.json, dict) else None

    def shown(self) -> str:
        """Status and body, for a failure message."""
        return clean_text(f"{self.status} {self.text.strip()}", 200)


@dataclass
class CheckContext:
    """What a check works with: requests to the tree's host, fresh inputs, and hints."""

    tree: Tree
    store_kind: StoreKind
    host: HostSession
    rng: random.Random
    db: Database | None = None  # on Postgres: the driver's own connection
    statuses: tuple[str, ...] = ()
    second_process: Callable[[], HostSession] | None = None  # the tree in another process

    @property
    def bucket_seconds(self) -> float:
        """The tree's TIME_BUCKET_SECONDS when it declares a sensible one, else the lesson's 60."""
        found = self.host.hello.get("time_bucket_seconds")
        if isinstance(found, int | float) and 0 < found <= 86400:
            return float(found)
        return 60.0

    # --- fresh inputs -------------------------------------------------------------
    def token(self, prefix: str) -> str:
        """A value no tree can guess: prefix and 8 random hex digits."""
        return f"{prefix}-{self.rng.getrandbits(32):08x}"

    def text(self) -> str:
        """A short random message."""
        return " ".join(self.rng.sample(WORDS, 3)) + f" {self.rng.randrange(1000)}"

    # --- the tree's surface ---------------------------------------------------------
    def post(self, path: str, body: object) -> Answer:
        """POST path through the tree's gateway."""
        return self.request("POST", path, body)

    def request(self, method: str, path: str, body: object = None) -> Answer:
        """Send one HTTP request through the tree's gateway and return its answer."""
        value = self.host.call("http", method=method, path=path, body=body)
        self.noted({"op": "http", "method": method, "path": path}, value)
        return _answer(value)

    def store(self, method: str, *args: Any, actor: str = "gateway", traced: bool = True) -> Any:
        """Call one of the store's methods in the host; RefusedError if the tree raised."""
        value = self.host.call("store", method=method, args=list(args), actor=actor, traced=traced)
        return self.noted({"op": "store", "method": method}, value)

    def clock(self, at: float | None) -> None:
        """Stop the host's clock at `at` (seconds since the epoch) for every clock call the
        tree makes, until moved again; None: the real clock. Each check starts on the real one."""
        self.host.call("clock", at=at)

    def key(
        self, session_id: str, client_message_id: str | None, message: str, now: float | None = None
    ) -> str:
        """idempotency_key_for(...) as the tree computes it."""
        value = self.host.call(
            "key",
            session_id=session_id,
            client_message_id=client_message_id,
            message=message,
            now=now,
        )
        return str(value)

    def batch(self, calls: list[dict[str, Any]], host: HostSession | None = None) -> list[Any]:
        """Several requests in one round trip, in order: each answer's value, or a RefusedError."""
        answers = (host or self.host).call("batch", calls=calls)
        found = answers if isinstance(answers, list) else []
        replies: list[Any] = []
        for index in range(len(calls)):
            answer = record(found[index]) if index < len(found) else {}
            ok = answer.get("ok") is True
            if ok:
                self.noted(calls[index], answer.get("value"))
            replies.append(answer.get("value") if ok else RefusedError(answer.get("error")))
        return replies

    def burst(self, n: int, op: str, **call: Any) -> list[dict[str, Any]]:
        """The same request on n threads at once, taking turns line by line of the tree."""
        answers = self.host.call("burst", n=n, call={"op": op, **call}, turns=True)
        found = [a for a in answers if isinstance(a, dict)] if isinstance(answers, list) else []
        for answer in found:
            if answer.get("ok") is True:
                self.noted({"op": op, **call}, answer.get("value"))
        return found

    def new_session(self) -> str:
        """Open a session through the gateway and return its id."""
        answer = self.post("/sessions", {"userId": self.token("user"), "title": self.text()})
        session_id = answer.field("sessionId")
        expect(
            answer.status == 201 and isinstance(session_id, str),
            _("POST /sessions -> 201 {sessionId}"),
            answer.shown(),
            rule=OPENS_SESSION,
        )
        return str(session_id)

    def new_run(self, session_id: str | None = None) -> dict[str, Any]:
        """Send a new message through the gateway and return the run it created."""
        body = {"sessionId": session_id or self.new_session(), "message": self.text()}
        answer = self.post("/chat", body)
        run_id = answer.field("runId")
        expect(
            answer.status == 202 and isinstance(run_id, str),
            _("POST /chat -> 202 {runId, status}"),
            answer.shown(),
            rule=ACCEPTS_MESSAGE,
        )
        return record(self.store("get_run", run_id, traced=False))

    # --- what the tables hold ---------------------------------------------------------
    def noted(self, call: dict[str, Any], value: Any) -> Any:
        """On Postgres, remember the row an answer says it made (see database.Ledger); value."""
        if self.db is not None:
            self.db.ledger.note(call, value)
        return value

    def audit(self) -> None:
        """On Postgres, fail unless the tables hold exactly the rows the answers named."""
        if self.db is not None:
            self.db.audit()

    def rows_with_key(self, key: str) -> int:
        """Rows in runs holding key: counted by the driver on Postgres, after every row was."""
        if self.db is not None:
            return self.db.count(key)
        return int(self.store("count_runs_with_key", key, traced=False))

    def statuses_of(self, run_ids: list[str]) -> list[str]:
        """Each run's status as stored, in one round trip: read by the driver on Postgres."""
        if self.db is not None:
            found = self.db.statuses(run_ids)
            return [found.get(run_id, "missing") for run_id in run_ids]
        replies = self.batch([store_call("get_run", run_id) for run_id in run_ids])
        return [str(record(reply).get("status", "missing")) for reply in replies]

    def status_of(self, run_id: str) -> str:
        """The run's status as stored: read by the driver on Postgres."""
        if self.db is not None:
            return self.db.status(run_id)
        return str(record(self.store("get_run", run_id, traced=False)).get("status"))

    def messages_at(self, run_id: str, seq: int) -> list[str]:
        """The contents stored for the run at seq: read by the driver on Postgres."""
        if self.db is not None:
            return self.db.contents(run_id, seq)
        found = self.store("messages_for_run", run_id, traced=False)
        rows = [record(m) for m in found] if isinstance(found, list) else []
        return [str(m.get("content")) for m in rows if m.get("seq") == seq]

    # --- where to look --------------------------------------------------------------
    def hint(self, relative: str, check: int) -> Hint:
        """Point at the TODO(check N) in one of the tree's files."""
        return hint_for(self.tree, relative, check)

    def schema_or(self, relative: str, check: int) -> Hint:
        """On Postgres the constraint lives in the schema; in memory, in relative."""
        if self.store_kind == StoreKind.POSTGRES:
            return self.hint("shared/schema.py", check)
        return self.hint(relative, check)


def store_call(
    method: str, *args: Any, actor: str = "gateway", traced: bool = False
) -> dict[str, Any]:
    """One store request, for CheckContext.batch."""
    return {"op": "store", "method": method, "args": list(args), "actor": actor, "traced": traced}


def _answer(value: Any) -> Answer:
    fields = value if isinstance(value, dict) else {}
    status = fields.get("status")
    return Answer(
        status=status if isinstance(status, int) else 0,
        text=str(fields.get("text", "")),
        json=fields.get("json"),
        replayed=fields.get("replayed") is True,
    )


def record(value: Any) -> dict[str, Any]:
    """A record as the host sent it (a dict), or an empty one if it sent something else."""
    return value if isinstance(value, dict) else {}


def expect(
    condition: bool, expected: str, got: str, hint: Hint | None = None, *, rule: Rule | None = None
) -> None:
    """Raise CheckFailedError unless condition holds, naming the rule it stands for."""
    if not condition:
        raise CheckFailedError(expected, got, hint, (rule,) if rule else ())


def expect_all(hint: Hint | None, *expectations: tuple[bool, str, str, Rule]) -> None:
    """Each (condition, expected, got, rule) as expect would judge it, all at once.

    For expectations judged on answers already in hand: the failure says what
    the first one that does not hold expected, and names the rule of every one
    that does not hold, so a class report lists a learner under each.
    """
    broken = [expectation for expectation in expectations if not expectation[0]]
    if broken:
        _holds, expected, got, _rule = broken[0]
        rules = tuple(dict.fromkeys(found[3] for found in broken))
        raise CheckFailedError(expected, got, hint, rules)
