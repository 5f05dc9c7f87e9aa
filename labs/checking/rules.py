"""The rules the six checks stand for, each with a stable id: what a failure says it broke.

A check that fails names the rule it saw broken (CheckFailedError.rules, then
CheckResult.rules and grading's Outcome.rules), so a class report can group
learners by the mistake itself, never by the words of a message. An id stays
the same across runs, seeds, languages and rewordings: `3.client-key-session`,
`4.lets:done->running`. A title says what the tree does wrong, as a message id
worded where it is shown; a rule made for a pair of states or a check fills
its title's {names} from its values.
"""

from __future__ import annotations

from dataclasses import dataclass

from labs.term.i18n import N_, _

CHECK_NUMBERS = range(1, 7)  # the six checks, by number: every rule here belongs to one


@dataclass(frozen=True)
class Rule:
    """One rule of the lesson, as a failure names it: a stable id, and what breaking it is."""

    id: str
    title: str  # a message id; {names} in it are filled from values
    values: tuple[tuple[str, str], ...] = ()

    def shown(self) -> str:
        """The title in the language in use, its values filled in."""
        return _(self.title).format(**dict(self.values))


# Opening a session and sending a message: several checks start there.
OPENS_SESSION = Rule(
    "gateway.open-session", N_("POST /sessions does not answer 201 with a sessionId")
)
ACCEPTS_MESSAGE = Rule("gateway.accept-chat", N_("POST /chat does not answer 202 with a run"))

# Check 2: the three grains.
SESSION_READS_BACK = Rule(
    "2.session-reads-back", N_("a session does not read back with its user_id and title")
)
NEW_RUN_PENDING = Rule("2.new-run-pending", N_("a new run does not read back as pending"))
MESSAGE_STORED = Rule("2.message-stored", N_("the store refuses a message of a new run"))
MESSAGES_IN_SEQ_ORDER = Rule("2.seq-order", N_("messages do not read back ordered by seq"))

# Check 3, the key alone, with a clientMessageId.
KEY_STABLE = Rule("3.key-stable", N_("the key changes on every call for the same request"))
KEY_RETURNED = Rule("3.key-returned", N_("idempotency_key_for raises instead of returning a key"))
CLIENT_KEY_TIMELESS = Rule(
    "3.client-key-time", N_("with a clientMessageId, time goes into the key")
)
CLIENT_KEY_SESSION = Rule(
    "3.client-key-session", N_("with a clientMessageId, the key ignores the session")
)
CLIENT_KEY_CLIENT_ID = Rule("3.client-key-client-id", N_("the key ignores the clientMessageId"))
KEY_SAME_IN_EVERY_PROCESS = Rule(
    "3.key-per-process",
    N_("the key depends on the process (a per-process salt such as hash(), an id, a random value)"),
)
# Check 3, the key alone, without a clientMessageId.
TEXT_KEY_WINDOW = Rule(
    "3.text-key-window",
    N_("without a clientMessageId, the key changes within one window: a retry is a new run"),
)
TEXT_KEY_LATER_WINDOW = Rule(
    "3.text-key-later-window",
    N_(
        "without a clientMessageId, the same text in a later window gets the same key: "
        "no time window in the key, or the wrong one"
    ),
)
TEXT_KEY_SESSION = Rule(
    "3.text-key-session", N_("without a clientMessageId, the key ignores the session")
)
TEXT_KEY_TEXT = Rule(
    "3.text-key-text", N_("without a clientMessageId, the key leaves the text out")
)
TEXT_KEY_AS_SENT = Rule(
    "3.text-key-as-sent",
    N_("the key folds the text's case or spacing instead of taking it as sent"),
)
KEY_NOW = Rule(
    "3.key-now", N_("the key differs between now=t and the clock reading t: one of them is ignored")
)
# Check 3 through the gateway and the store.
RETRY_ACCEPTED = Rule(
    "3.retry-202", N_("a retry with the same clientMessageId is not answered 202")
)
RETRY_SAME_RUN = Rule(
    "3.retry-same-run", N_("a retry with the same clientMessageId makes a second run")
)
REPLAY_REPORTED = Rule(
    "3.replay-reported", N_("a replay is not reported as one (Idempotent-Replayed: true)")
)
ONE_ROW_PER_KEY = Rule("3.one-row-per-key", N_("more than one row in runs holds one key"))
OTHER_SESSION_NEW_RUN = Rule(
    "3.other-session-new-run",
    N_("another session's message with the same clientMessageId gets this session's run"),
)
OTHER_CLIENT_ID_NEW_RUN = Rule(
    "3.other-client-id-new-run",
    N_(
        "the same text under another clientMessageId gets the first run: the store looks up "
        "something other than the key"
    ),
)
TEXT_RETRY_SAME_RUN = Rule(
    "3.text-retry-same-run",
    N_("without a clientMessageId, a retry in the same window makes a second run"),
)
TEXT_NEXT_WINDOW_NEW_RUN = Rule(
    "3.text-next-window-new-run",
    N_("without a clientMessageId, the same text in the next window gets the old run"),
)
TEXT_OTHER_SESSION_NEW_RUN = Rule(
    "3.text-other-session-new-run",
    N_("without a clientMessageId, another session's same text gets this session's run"),
)
TEXT_OTHER_TEXT_NEW_RUN = Rule(
    "3.text-other-text-new-run",
    N_("without a clientMessageId, another text in the session gets the first run"),
)
TEXT_CAPITAL_NEW_RUN = Rule(
    "3.text-capital-new-run",
    N_("without a clientMessageId, the same text with a capital letter gets the first run"),
)
RACE_ACCEPTED = Rule("3.race-202", N_("identical requests sent at once are not all answered 202"))
RACE_ONE_RUN = Rule(
    "3.race-one-run",
    N_("identical requests sent at once make more than one run: look-up and insert are not atomic"),
)

# Check 4: the state machine.
SIX_STATUSES = Rule("4.statuses", N_("the statuses are not the lesson's six"))
LETS_EVERY_MOVE = Rule(
    "4.lets-every-move", N_("the allowlist lets every move through: it refuses none")
)
MOVE_APPLIED = Rule("4.move-applied", N_("an allowed move leaves the run in another status"))
REFUSAL_NAMES_STATES = Rule(
    "4.refusal-names-states",
    N_("a refused move raises something other than IllegalTransitionError naming both states"),
)
REFUSED_MOVE_KEEPS_RUN = Rule("4.refused-move-writes", N_("a refused move still changes the run"))

# Check 5: one message per (run, seq).
SEQ_PER_RUN = Rule(
    "5.seq-per-run",
    N_("seq is unique across all runs, not per (run, seq): a second run's seq 0 is refused"),
)
MESSAGE_ACCEPTED = Rule("5.message-accepted", N_("a message at a new seq of its run is refused"))
DUPLICATE_REFUSED = Rule(
    "5.duplicate-refused", N_("a second message at the same (run, seq) is stored")
)
DUPLICATE_ERROR = Rule(
    "5.duplicate-error",
    N_("a second message at the same (run, seq) raises something other than DuplicateMessageError"),
)
FIRST_MESSAGE_KEPT = Rule(
    "5.first-message-kept", N_("a second message at seq 0 replaces the first")
)

# Check 6: the worker's query.
PENDING_RUNS_LIST = Rule(
    "6.pending-runs-list", N_("pending_runs does not list the run the gateway persisted")
)
PENDING_RUN_STATUS = Rule(
    "6.pending-run-status", N_("pending_runs reports the new run in another status")
)

# On Postgres: the driver's own count of the rows.
ROWS_NAMED = Rule(
    "pg.rows-named",
    N_("on Postgres, the tables hold other rows than the answers named (one request, two rows?)"),
)


def refuses(current: str, target: str) -> Rule:
    """The allowlist refuses a move the lesson allows: a rule for each such pair."""
    return Rule(
        f"4.refuses:{current}->{target}",
        N_("the allowlist refuses {current} → {target}"),
        (("current", current), ("target", target)),
    )


def lets(current: str, target: str) -> Rule:
    """The allowlist lets through a move the lesson refuses: a rule for each such pair."""
    return Rule(
        f"4.lets:{current}->{target}",
        N_("the allowlist lets {current} → {target}"),
        (("current", current), ("target", target)),
    )


def refuses_missing(field: str) -> Rule:
    """Check 1: a message missing a field is not refused with 400 naming it."""
    return Rule(
        f"1.refuse-missing:{field}",
        N_("a message missing {field} is not refused with 400 naming it"),
        (("field", field),),
    )


def did_not_finish(check: str) -> Rule:
    """The check ran out of time: an endless loop or a lock never released, in the tree."""
    return Rule(
        f"{check}.did-not-finish",
        N_("check {check} did not finish in time (an endless loop, or a lock never released)"),
        (("check", check),),
    )


def host_stopped(check: str) -> Rule:
    """The tree's process exited, or wrote what is no answer, during the check."""
    return Rule(
        f"{check}.host-stopped",
        N_("the tree's process stopped answering during check {check}"),
        (("check", check),),
    )


def raised(check: str) -> Rule:
    """The tree raised where the check needed an answer."""
    return Rule(
        f"{check}.raised",
        N_("the tree raised an error during check {check} where it should have answered"),
        (("check", check),),
    )


def unreadable(check: str) -> Rule:
    """The tree answered with something the check cannot read."""
    return Rule(
        f"{check}.unreadable",
        N_("the tree answered check {check} with something the check cannot read"),
        (("check", check),),
    )
