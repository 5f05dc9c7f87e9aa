"""The lesson's moves on one bench: transitions and messages through the tree's own store.

Each attempt is journalled with what the store said, so the page can show a
refusal, or a move the lesson forbids that went through anyway.
"""

from __future__ import annotations

from labs.lesson import STATUSES, RunStatus, next_states
from labs.term.i18n import N_

from ..i18n import Sentence, Verbatim, _
from ..safety.forms import FormError
from .gateway_client import GatewayClient
from .journal import Action, AttemptOutcome, Entry
from .outcome import Outcome, Tone
from .remote_store import error_text
from .tree_link import TreeNotAnsweringError

# Every status in the order of a run's life: pending, running, streaming, done, failed, cancelled.
STATES = list(STATUSES)
# The lesson's allowlist (the reference one). Buttons offer these moves on both trees, in
# lifecycle order, and a move outside it that a tree accepts anyway is journalled as illegal.
LESSON_ALLOWED: dict[str, list[str]] = {state: next_states(state) for state in STATUSES}


class LessonMoves(GatewayClient):
    """The buttons that provoke the lesson: advance, force done -> running, duplicate a seq."""

    unavailable: type[Exception]  # the tree's StoreUnavailableError, as mirrored

    def move(self, run_id: str, source: str, target: str, actor: str) -> Entry:
        """Ask the store for source -> target and journal what it said."""
        try:
            self.store.transition(run_id, source, target)
        except (self.unavailable, TreeNotAnsweringError):  # not a refusal: no answer at all
            raise
        except Exception as error:  # the tree's typed errors, or a learner's bug
            return self.journal.add(
                Entry(
                    run_id,
                    actor,
                    Action.TRANSITION,
                    AttemptOutcome.REFUSED,
                    Verbatim(error_text(error)),
                    source,
                    target,
                )
            )
        if target in LESSON_ALLOWED[source]:
            return self.journal.add(
                Entry(
                    run_id,
                    actor,
                    Action.TRANSITION,
                    AttemptOutcome.ACCEPTED,
                    Sentence(),
                    source,
                    target,
                )
            )
        return self.journal.add(
            Entry(
                run_id,
                actor,
                Action.TRANSITION,
                AttemptOutcome.ILLEGAL,
                Sentence(N_("the allowlist forbids this move")),
                source,
                target,
            )
        )

    def append(self, run_id: str, seq: int, role: str, content: str, actor: str) -> Entry:
        """Write a message at seq and journal whether the store took it."""
        try:
            session_id = self.store.get_run(run_id).session_id
            self.store.append_message(session_id, run_id, role, content, seq)
        except (self.unavailable, TreeNotAnsweringError):  # not a refusal: no answer at all
            raise
        except Exception as error:  # DuplicateMessageError is the expected one
            return self.journal.add(
                Entry(
                    run_id,
                    actor,
                    Action.MESSAGE,
                    AttemptOutcome.REFUSED,
                    Verbatim(error_text(error)),
                    seq=seq,
                )
            )
        taken = sum(1 for m in self.store.messages_for_run(run_id) if m.seq == seq)
        if taken > 1:
            return self.journal.add(
                Entry(
                    run_id,
                    actor,
                    Action.MESSAGE,
                    AttemptOutcome.DUPLICATE,
                    Sentence(
                        N_("stored beside {count} other(s) at seq {seq}"),
                        count=taken - 1,
                        seq=seq,
                    ),
                    seq=seq,
                )
            )
        return self.journal.add(
            Entry(
                run_id,
                actor,
                Action.MESSAGE,
                AttemptOutcome.ACCEPTED,
                Verbatim(content),
                seq=seq,
            )
        )

    def status_of(self, run_id: str) -> str:
        """The run's status as the store reports it now (FormError if it left the database)."""
        return str(self.stored_run(run_id).status)

    def advance(self, run_id: str, target: str) -> Outcome:
        """Move a run to one of the next states the lesson's allowlist offers."""
        current = self.status_of(run_id)
        if target not in LESSON_ALLOWED[current]:
            offered = ", ".join(LESSON_ALLOWED[current]) or _("nothing (terminal)")
            raise FormError(
                "target",
                _(
                    "{current} → {target} is not offered; "
                    "from {current} the choices are: {offered}",
                    current=current,
                    target=repr(target),
                    offered=offered,
                ),
            )
        return self._outcome_of(self.move(run_id, current, target, "dashboard"))

    def force_back(self, run_id: str) -> Outcome:
        """Try the move the lesson forbids: done -> running."""
        current = self.status_of(run_id)
        if current != RunStatus.DONE:
            raise FormError(
                "run",
                _("force done → running needs a done run; it is {current}", current=current),
            )
        return self._outcome_of(self.move(run_id, RunStatus.DONE, RunStatus.RUNNING, "dashboard"))

    def duplicate_seq(self, run_id: str) -> Outcome:
        """Write a second message at a seq the run already has (seq 0 if it has none).

        The messages are written in the page's language: they are the dashboard's words.
        """
        self.stored_run(run_id)
        seqs = [m.seq for m in self.store.messages_for_run(run_id)]
        if not seqs:
            self.append(run_id, 0, "assistant", _("first write at seq 0"), "dashboard")
        seq = max(seqs, default=0)
        content = _("second write at seq {seq}", seq=seq)
        return self._outcome_of(self.append(run_id, seq, "assistant", content, "dashboard"))

    def _outcome_of(self, entry: Entry) -> Outcome:
        move = (
            f"{entry.source} → {entry.target}"
            if entry.action == Action.TRANSITION
            else Sentence(N_("message at seq {seq}"), seq=entry.seq)
        )
        tones = {AttemptOutcome.ACCEPTED: Tone.OK, AttemptOutcome.REFUSED: Tone.REFUSED}
        tone = tones.get(entry.outcome, Tone.WARN)
        words = {
            AttemptOutcome.ACCEPTED: N_("accepted"),
            AttemptOutcome.REFUSED: N_("REFUSED"),
            AttemptOutcome.ILLEGAL: N_("WENT THROUGH (illegal)"),
            AttemptOutcome.DUPLICATE: N_("STORED TWICE"),
        }
        said = Sentence(words[entry.outcome])
        if not entry.detail:
            text = Sentence(
                N_("run {run_id}: {move} {outcome}"),
                run_id=entry.run_id,
                move=move,
                outcome=said,
            )
        else:
            text = Sentence(
                N_("run {run_id}: {move} {outcome}: {detail}"),
                run_id=entry.run_id,
                move=move,
                outcome=said,
                detail=entry.detail,
            )
        return self._remember(Outcome(tone, text))
