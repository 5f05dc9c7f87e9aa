"""Plausible learners' answers and the verdict each must get.

Each entry is the solved tree (the solution's regions spliced into a copy of
the starter) with one or more region bodies rewritten the way a learner might
write them, plus the migration that learner would have. Edits stay inside
the regions, except in the few entries with `outside` edits: those a grader
scores only where the tree passes both as handed in and spliced, and marks
"needs review".

The verdict is the set of checks that must fail, on memory and on Postgres,
and whether the migration criterion passes. Many of these verdicts come only
from checks that test the rule (fresh inputs, all 36 status pairs,
per-session and per-run scoping, bursts of concurrent requests); checks that
try one sample would pass them wrongly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from labs.trees.regions import parse_regions, read_lines
from tests.grading import submissions as make
from tests.grading.mistakes import migrations as variant


@dataclass(frozen=True)
class Body:
    """A new body for the region serving `check` in `path` (relative to the tree).

    `layouts` maps a text found in the file to the body to use there: the
    store's region bodies depend on the store's fields, so a body is given for
    each layout of the file ("" matches any).
    """

    path: str
    check: int
    layouts: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Answer:
    """One learner's answer: its region bodies, its migration, and the verdict it must get."""

    name: str
    story: str
    bodies: tuple[Body, ...] = ()
    migration: Callable[[], str] = variant.reference
    memory_fails: frozenset[int] = frozenset()
    postgres_fails: frozenset[int] = frozenset()
    migration_passes: bool = True
    # (file, text, replacement) edits outside the regions: graded as handed in and spliced
    outside: tuple[tuple[str, str, str], ...] = ()
    correct: bool = field(init=False)

    def __post_init__(self) -> None:
        correct = not (self.memory_fails or self.postgres_fails) and self.migration_passes
        object.__setattr__(self, "correct", correct)


def body(path: str, check: int, text: str) -> Body:
    """A Body with one text whatever the layout of the file."""
    return Body(path, check, (("", text),))


KEYS = "shared/keys.py"
STATES = "shared/states.py"
MEMORY = "infra/memory.py"
SCHEMA = "shared/schema.py"

# The key's region computes `material` from session_id, client_message_id, message, now.
KEY_WITH_TIME = """\
moment = time.time() if now is None else now
bucket = int(moment // TIME_BUCKET_SECONDS)
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}\\x1f{bucket}"
else:
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_WITHOUT_SESSION = """\
if client_message_id is not None:
    material = f"client\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_FROM_TEXT_ONLY = """\
bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
RANDOM_KEY = """\
import uuid

material = f"{session_id}\\x1f{uuid.uuid4()}"
"""
KEY_FOR_THE_CHECKS_LITERALS = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
    if client_message_id not in ("c-1", "c-2", "c-42", "msg-1"):
        material += f"\\x1f{time.time_ns()}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_UUID5 = """\
import uuid

if client_message_id is not None:
    name = f"client/{session_id}/{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    name = f"text/{session_id}/{bucket}/{message}"
material = str(uuid.uuid5(uuid.NAMESPACE_URL, name))
"""
KEY_BLAKE2 = """\
if client_message_id is not None:
    parts = ["client", session_id, client_message_id]
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    parts = ["text", session_id, str(bucket), message]
material = hashlib.blake2b("\\x1f".join(parts).encode(), digest_size=32).hexdigest()
"""
KEY_JSON_TUPLE = """\
import json

if client_message_id is not None:
    material = json.dumps(("client", session_id, client_message_id))
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = json.dumps(("text", session_id, bucket, message))
"""

# Without a clientMessageId: the window, the session, the text, and the same key in every process.
KEY_HOLDS_THE_MOMENT = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    moment = time.time() if now is None else now
    material = f"text\\x1f{session_id}\\x1f{moment}\\x1f{message}"
"""
KEY_CLOCK_MODULO_WINDOW = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int(time.time() if now is None else now) % TIME_BUCKET_SECONDS
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_WINDOW_LENGTH_NOT_NUMBER = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{TIME_BUCKET_SECONDS}\\x1f{message}"
"""
KEY_SESSION_PREFIX = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id[:6]}\\x1f{bucket}\\x1f{message}"
"""
KEY_WITHOUT_THE_TEXT = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}"
"""
KEY_TEXT_SHORTENED_BY_HASH = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{hash(message):x}"
"""
KEY_CLOCK_IN_NANOSECONDS = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    moment = time.time_ns() if now is None else now
    bucket = int(moment // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_ROUNDED_WINDOW = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = round((time.time() if now is None else now) / TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_CLOCK_MINUTE = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    minute = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(time.time() if now is None else now))
    material = f"text\\x1f{session_id}\\x1f{minute}\\x1f{message}"
"""

# The clock read by the key itself, never through `now`: check 3 moves the host's clock.
KEY_CLIENT_ID_READS_THE_CLOCK = """\
if client_message_id is not None:
    bucket = int(time.time() // TIME_BUCKET_SECONDS)
    material = f"client\\x1f{session_id}\\x1f{client_message_id}\\x1f{bucket}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_READS_THE_WALL_CLOCK = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int(time.time() // TIME_BUCKET_SECONDS)  # `now` is left unused
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_HOUR_LONG_WINDOW = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // 3600)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"
"""
KEY_FOLDS_CASE = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message.casefold()}"
"""
KEY_COLLAPSES_SPACES = """\
if client_message_id is not None:
    material = f"client\\x1f{session_id}\\x1f{client_message_id}"
else:
    bucket = int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)
    words = " ".join(message.split())
    material = f"text\\x1f{session_id}\\x1f{bucket}\\x1f{words}"
"""


def allowlist(**edges: str) -> str:
    """An ALLOWED mapping written out status by status ("" for none)."""
    lines = ["ALLOWED: Mapping[RunStatus, frozenset[RunStatus]] = {"]
    for status, targets in edges.items():
        names = ", ".join(f"RunStatus.{t.upper()}" for t in targets.split())
        lines.append(
            f"    RunStatus.{status.upper()}: frozenset({{{names}}}),"
            if names
            else f"    RunStatus.{status.upper()}: frozenset(),"
        )
    return "\n".join([*lines, "}"]) + "\n"


LESSON = {
    "pending": "running cancelled failed",
    "running": "streaming done failed cancelled",
    "streaming": "done failed cancelled",
    "done": "",
    "failed": "",
    "cancelled": "",
}
ALLOWLIST_AS_PAIRS = """\
_MOVES = {
    ("pending", "running"), ("pending", "cancelled"), ("pending", "failed"),
    ("running", "streaming"), ("running", "done"), ("running", "failed"),
    ("running", "cancelled"), ("streaming", "done"), ("streaming", "failed"),
    ("streaming", "cancelled"),
}
ALLOWED: Mapping[RunStatus, frozenset[RunStatus]] = {
    status: frozenset(RunStatus(t) for s, t in _MOVES if s == status) for status in RunStatus
}
"""
# The store's check 3 region, looking the key up with the lock released (a read "needs no
# lock"), then inserting under it: two identical requests can both find the key free.
LOOKUP_OUTSIDE_THE_LOCK = """\
self._lock.release()
try:
    holders = list(self._runs_by_key.get(idempotency_key, []))
finally:
    self._lock.acquire()
if holders:
    return RunCreated(run=self._runs[holders[0]].model_copy(), created=False)
"""
STORE_TRUSTS_THE_CALLER = "pass  # the gateway looks the key up first\n"
# The store's check 3 region, finding the run by the session and the text instead of the key.
STORE_FINDS_THE_RUN_BY_ITS_TEXT = """\
for held in self._runs.values():
    if held.session_id == session_id and held.input == input:
        return RunCreated(run=held.model_copy(), created=False)
"""
# The store's check 3 region, handing back the run that holds the key as if it had made it.
STORE_SAYS_CREATED_FOR_A_HELD_RUN = """\
if idempotency_key in self._runs_by_key:
    holder = self._runs[self._runs_by_key[idempotency_key][0]]
    return RunCreated(run=holder.model_copy(), created=True)
"""
GATEWAY_CREATE = "        outcome = store.create_run(session_id, message, key)\n"
GATEWAY_LOOKS_FIRST = """\
        found = [r for r in store.pending_runs(9999) if r.idempotency_key == key]
        if found:
            outcome = RunCreated(run=found[0], created=False)
        else:
            outcome = store.create_run(session_id, message, key)
"""
TRANSITION_CHECKED = """\
        ensure_transition(run_id, expected, target)
        with self._lock:"""
TRANSITION_WRITES_FIRST = """\
            run.status = target
            ensure_transition(run_id, expected, target)  # too late: the row has changed
            run.updated_at = utc_now()"""
# The store's check 5 region, for the list-of-messages store and the (run_id, seq) index one.
MESSAGES_LIST = "self._messages.append("
MESSAGES_INDEX = "self._message_at"
SEQ_ALONE_IN_LIST = """\
if any(m.seq == seq for m in self._messages):
    raise errors.DuplicateMessageError(run_id or "", seq)
"""
SEQ_ALONE_IN_INDEX = """\
if any(taken == seq for _, taken in self._message_at):
    raise errors.DuplicateMessageError(run_id or "", seq)
"""
SETS_FROM_LIST = """\
seqs_by_run: dict[str, set[int]] = {}
for m in self._messages:
    if m.run_id is not None:
        seqs_by_run.setdefault(m.run_id, set()).add(m.seq)
if run_id is not None and seq in seqs_by_run.get(run_id, set()):
    raise errors.DuplicateMessageError(run_id, seq)
"""
SETS_FROM_INDEX = """\
seqs_by_run: dict[str, set[int]] = {}
for owner, taken in self._message_at:
    seqs_by_run.setdefault(owner, set()).add(taken)
if run_id is not None and seq in seqs_by_run.get(run_id, set()):
    raise errors.DuplicateMessageError(run_id, seq)
"""
SCHEMA_SEQ_ALONE = 'UniqueConstraint("seq", name="messages_seq_key"),\n'
SCHEMA_NO_KEY = "# (no unique constraint: the index on session_id is enough, surely)\n"


def seq_alone_in_store() -> Body:
    """Check 5 in the memory store, unique on seq alone, for either layout of the store."""
    return Body(
        MEMORY, 5, ((MESSAGES_INDEX, SEQ_ALONE_IN_INDEX), (MESSAGES_LIST, SEQ_ALONE_IN_LIST))
    )


CATALOGUE: tuple[Answer, ...] = (
    # Check 3: the key.
    Answer(
        "key-hashes-time-even-with-a-client-id",
        "puts the time bucket into every key, so a retry a minute later is a new run",
        (body(KEYS, 3, KEY_WITH_TIME),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "key-not-scoped-to-the-session",
        "hashes the clientMessageId alone: another session's c-1 replays this one's run",
        (body(KEYS, 3, KEY_WITHOUT_SESSION),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "key-ignores-the-client-id",
        "keys on the text alone: two messages with different clientMessageIds become one run",
        (body(KEYS, 3, KEY_FROM_TEXT_ONLY),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "random-key",
        "a uuid per request: no retry ever matches",
        (body(KEYS, 3, RANDOM_KEY),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "key-special-cases-the-checks-literals",
        "a stable key only for the clientMessageIds it saw in the checks: fresh ids never match",
        (body(KEYS, 3, KEY_FOR_THE_CHECKS_LITERALS),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "key-lookup-outside-the-lock",
        "looks the key up with the store's lock released: a burst of retries makes two runs",
        (body(MEMORY, 3, LOOKUP_OUTSIDE_THE_LOCK),),
        memory_fails=frozenset({3}),
    ),
    Answer(
        "key-looked-up-in-the-gateway",
        "the gateway searches for the key, then inserts: check-then-insert in two calls",
        (body(MEMORY, 3, STORE_TRUSTS_THE_CALLER),),
        outside=(
            ("gateway/routes.py", GATEWAY_CREATE, GATEWAY_LOOKS_FIRST),
            (
                "gateway/routes.py",
                "from ..infra.store import Store\n",
                "from ..infra.store import RunCreated, Store\n",
            ),
        ),
        memory_fails=frozenset({3}),
    ),
    Answer(
        "key-client-id-branch-reads-the-clock",
        "calls time.time() for a bucket in the clientMessageId branch: a retry a minute later "
        "is a new run",
        (body(KEYS, 3, KEY_CLIENT_ID_READS_THE_CLOCK),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "store-finds-the-run-by-its-text",
        "looks the run up by session and text, not by key: a new clientMessageId with the same "
        "text gets the old run",
        (body(MEMORY, 3, STORE_FINDS_THE_RUN_BY_ITS_TEXT),),
        memory_fails=frozenset({3}),
    ),
    Answer(
        "store-says-created-for-a-held-run",
        "hands back the run holding the key with created=True: a replay is answered "
        "Idempotent-Replayed: false",
        (body(MEMORY, 3, STORE_SAYS_CREATED_FOR_A_HELD_RUN),),
        memory_fails=frozenset({3}),
    ),
    Answer(
        "key-from-a-uuid5",
        "correct but different: a uuid5 of the same parts",
        (body(KEYS, 3, KEY_UUID5),),
    ),
    Answer(
        "key-with-blake2",
        "correct but different: blake2b over the same parts",
        (body(KEYS, 3, KEY_BLAKE2),),
    ),
    Answer(
        "key-as-json-of-a-tuple",
        "correct but different: json.dumps of a tagged tuple",
        (body(KEYS, 3, KEY_JSON_TUPLE),),
    ),
    # Check 3 without a clientMessageId: each rule has a mistake of its own.
    Answer(
        "text-key-holds-the-moment-not-its-window",
        "puts the moment itself in a text key: the same text a second later is a new run",
        (body(KEYS, 3, KEY_HOLDS_THE_MOMENT),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-takes-the-clock-modulo-the-window",
        "% for //: the second within the minute, new every second and the same every minute",
        (body(KEYS, 3, KEY_CLOCK_MODULO_WINDOW),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-holds-the-windows-length-not-its-number",
        "computes the bucket, then writes TIME_BUCKET_SECONDS in its place: no time in the key",
        (body(KEYS, 3, KEY_WINDOW_LENGTH_NOT_NUMBER),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-scoped-by-the-session-ids-first-characters",
        "a ULID's first characters are its creation time: sessions opened together share them",
        (body(KEYS, 3, KEY_SESSION_PREFIX),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-leaves-the-text-out",
        "one key per session and window: a second, different message gets 409",
        (body(KEYS, 3, KEY_WITHOUT_THE_TEXT),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-shortens-the-text-with-hash",
        "hash(message) is salted per process: another gateway instance computes another key",
        (body(KEYS, 3, KEY_TEXT_SHORTENED_BY_HASH),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-reads-the-clock-in-nanoseconds",
        "time.time_ns() when no `now` is given: the gateway's window is 60 ns, not 60 s",
        (body(KEYS, 3, KEY_CLOCK_IN_NANOSECONDS),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-windows-an-hour-long",
        "buckets by 3600 s, not TIME_BUCKET_SECONDS: the same words a minute later are a retry",
        (body(KEYS, 3, KEY_HOUR_LONG_WINDOW),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-folds-case",
        "casefolds the text: \u201cStop\u201d after \u201cstop\u201d is refused with 409",
        (body(KEYS, 3, KEY_FOLDS_CASE),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-collapses-spaces",
        "collapses runs of spaces: \u201ca  b\u201d after \u201ca b\u201d is refused with 409",
        (body(KEYS, 3, KEY_COLLAPSES_SPACES),),
        memory_fails=frozenset({3}),
        postgres_fails=frozenset({3}),
    ),
    Answer(
        "text-key-reads-the-wall-clock",
        "correct but different: the bucket from time.time() always, `now` left unused",
        (body(KEYS, 3, KEY_READS_THE_WALL_CLOCK),),
    ),
    Answer(
        "text-key-rounds-to-the-nearest-window",
        "correct but different: round() instead of //, windows centred on the multiples",
        (body(KEYS, 3, KEY_ROUNDED_WINDOW),),
    ),
    Answer(
        "text-key-by-the-clocks-minute",
        "correct but different: the UTC minute as text, a 60 s window as TIME_BUCKET_SECONDS says",
        (body(KEYS, 3, KEY_CLOCK_MINUTE),),
    ),
    # Check 4: the allowlist.
    Answer(
        "allowlist-without-pending-to-failed",
        "forgets that a pending run may fail before it runs",
        (body(STATES, 4, allowlist(**{**LESSON, "pending": "running cancelled"})),),
        memory_fails=frozenset({4}),
        postgres_fails=frozenset({4}),
    ),
    Answer(
        "allowlist-with-done-to-running",
        "lets a done run start again",
        (body(STATES, 4, allowlist(**{**LESSON, "done": "running"})),),
        memory_fails=frozenset({4}),
        postgres_fails=frozenset({4}),
    ),
    Answer(
        "allowlist-with-cancelled-to-pending",
        "lets a cancelled run be queued again",
        (body(STATES, 4, allowlist(**{**LESSON, "cancelled": "pending"})),),
        memory_fails=frozenset({4}),
        postgres_fails=frozenset({4}),
    ),
    Answer(
        "allowlist-with-streaming-to-running",
        "lets a streaming run go back to running",
        (body(STATES, 4, allowlist(**{**LESSON, "streaming": "running done failed cancelled"})),),
        memory_fails=frozenset({4}),
        postgres_fails=frozenset({4}),
    ),
    Answer(
        "a-refused-move-still-writes",
        "the store changes the row, then asks whether the move was allowed",
        outside=(
            ("infra/memory.py", TRANSITION_CHECKED, "        with self._lock:"),
            (
                "infra/memory.py",
                "            run.status = target\n            run.updated_at = utc_now()",
                TRANSITION_WRITES_FIRST,
            ),
        ),
        memory_fails=frozenset({4}),
    ),
    Answer(
        "allowlist-as-a-set-of-pairs",
        "correct but different: the moves as (from, to) pairs, the mapping built from them",
        (body(STATES, 4, ALLOWLIST_AS_PAIRS),),
    ),
    # Check 5: one message per (run, seq).
    Answer(
        "store-unique-on-seq-alone",
        "refuses seq 0 in every run once one run has it",
        (seq_alone_in_store(),),
        memory_fails=frozenset({5}),
    ),
    Answer(
        "store-index-as-dict-of-sets",
        "correct but different: a dict of seq sets per run",
        (Body(MEMORY, 5, ((MESSAGES_INDEX, SETS_FROM_INDEX), (MESSAGES_LIST, SETS_FROM_LIST))),),
    ),
    Answer(
        "schema-unique-on-seq-alone",
        "declares seq unique on its own, and migrates that",
        (body(SCHEMA, 5, SCHEMA_SEQ_ALONE),),
        migration=variant.SEQ_ALONE,
        postgres_fails=frozenset({5}),
        migration_passes=False,
    ),
    Answer(
        "partial-unique-index-on-messages",
        "a unique index on (run_id, seq) WHERE run_id IS NOT NULL: not the constraint",
        migration=variant.PARTIAL_MESSAGES_INDEX,
        migration_passes=False,
    ),
    Answer(
        "partial-unique-index-on-runs",
        "a unique index on idempotency_key that skips cancelled runs",
        migration=variant.PARTIAL_RUNS_INDEX,
        postgres_fails=frozenset({3}),
        migration_passes=False,
    ),
    Answer(
        "migration-without-constraints",
        "generated the migration before declaring the constraints",
        migration=variant.WITHOUT_CONSTRAINTS,
        postgres_fails=frozenset({3, 5}),
        migration_passes=False,
    ),
    # Issue 21: regions right, schema.py declaring both; the migration alone is wrong.
    Answer(
        "migration-without-the-messages-key",
        "declared (run_id, seq) unique in schema.py after generating the migration",
        migration=variant.WITHOUT_MESSAGES_KEY,
        postgres_fails=frozenset({5}),
        migration_passes=False,
    ),
    Answer(
        "migration-with-a-deferrable-runs-key",
        "made the idempotency key's constraint DEFERRABLE INITIALLY DEFERRED in the migration",
        migration=variant.DEFERRABLE_RUNS_KEY,
        postgres_fails=frozenset(range(1, 7)),  # Postgres refuses every run it makes
        migration_passes=False,
    ),
    Answer(
        "migration-with-a-unique-index-on-an-expression",
        "a unique index on lower(idempotency_key) in the migration instead of the constraint",
        migration=variant.EXPRESSION_INDEX,
        postgres_fails=frozenset({3}),
        migration_passes=False,
    ),
    Answer(
        "migration-with-tables-in-public",
        "a migration generated against tables in public names that schema for each",
        migration=variant.TABLES_IN_PUBLIC,
        postgres_fails=frozenset(range(1, 7)),  # no tables where the checks look
        migration_passes=False,
    ),
    Answer(
        "unique-indexes-instead-of-constraints",
        "correct but different: unique indexes, added after the tables",
        migration=variant.UNIQUE_INDEXES,
    ),
)


def build(answer: Answer, folder: Path) -> Path:
    """The answer as a submission: the solved tree, bodies rewritten, its migration beside it."""
    tree = make.fixed(folder) / "starter"
    for change in answer.bodies:
        rewrite_region(tree / change.path, change)
    for relative, old, new in answer.outside:
        path = tree / relative
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{answer.name}: {old!r} is not once in {relative}"
        path.write_text(text.replace(old, new), encoding="utf-8")
    variant.place(tree, answer.migration())
    return tree


def rewrite_region(path: Path, change: Body) -> None:
    """Replace the body of the region serving change.check in path, keeping its markers."""
    lines = read_lines(path)
    (region,) = [r for r in parse_regions(str(path), lines) if r.check == change.check]
    text = "\n".join(lines)
    code = next(code for marker, code in change.layouts if marker in text)
    indented = [f"{region.indent}{line}" if line else "" for line in code.splitlines()]
    lines[region.start : region.end - 1] = indented
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
