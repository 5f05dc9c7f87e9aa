"""The checks' inputs: a printed seed replays a run, and nothing the host sees predicts the next.

The host is the learner's process: it sees every request the driver sends.
These tests take the attacker's side with what it has (the tokens and texts
in those requests) and the attacks that worked on the old inputs (a 20-bit
seed tried exhaustively from the first userId; a Mersenne Twister's state
rebuilt from its outputs).
"""

from __future__ import annotations

import hmac
import json
import os
import random
import re
import secrets
import time
from typing import Any

from labs.checking.inputs import SEED_BITS, KeyedRandom, fresh_seed, key_for
from labs.checking.launch import ForkLauncher
from labs.checking.protocol import HostProcess, HostSpec
from labs.checking.runner import draw_seed, run_checks

TOKEN = re.compile(r"\b(?:user|c)-([0-9a-f]{8})\b")
OLD_SEEDS = 1 << 20  # the old seeds: secrets.randbelow(1_000_000)
ISSUE_SECONDS = 9.0  # how long the issue's recovery of such a seed took


class RecordingLauncher:
    """A fork launcher that keeps every request line the hosts were sent: what a host sees."""

    def __init__(self) -> None:
        self.inner = ForkLauncher()
        self.sent: list[dict[str, Any]] = []

    def launch(self, request: HostSpec) -> HostProcess:
        """Start a host whose send() records each request before it goes out."""
        host = self.inner.launch(request)
        send = host.send

        def recorded(message: dict[str, Any]) -> None:
            self.sent.append(message)
            send(message)

        host.send = recorded  # type: ignore[method-assign]
        return host


def seen_by_the_host(seed: int, only: set[str]) -> list[str]:
    """The tokens the host is sent in a run of the solution with this seed, in order."""
    launcher = RecordingLauncher()
    report = run_checks("solution", seed=seed, only=only, launcher=launcher)
    assert report.ok, report.error or [r.message for r in report.results]
    requests = [{k: v for k, v in m.items() if k != "id"} for m in launcher.sent]
    return TOKEN.findall(json.dumps(requests))


def untemper(value: int) -> int:
    """Undo the Mersenne Twister's output tempering: one word of its internal state."""
    value ^= value >> 18
    value ^= (value << 15) & 0xEFC60000
    result = value
    for _ in range(5):
        result = value ^ ((result << 7) & 0x9D2C5680)
    value = result
    for _ in range(2):
        result = value ^ (result >> 11)
    return result & 0xFFFFFFFF


def predicted_by_state_recovery(outputs: list[int]) -> int:
    """The output after 624 32-bit ones, from a Mersenne Twister rebuilt from them."""
    state = tuple(untemper(v) for v in outputs[-624:])
    clone = random.Random()
    clone.setstate((3, (*state, 624), None))
    return clone.getrandbits(32)


def recover_seed(first_token: int, derive: Any, budget: float = ISSUE_SECONDS) -> int | None:
    """The issue's attack: try every old seed until one gives the first token, within budget."""
    deadline = time.monotonic() + budget
    for seed in range(OLD_SEEDS):
        if derive(seed) == first_token:
            return seed
        if seed % 4096 == 0 and time.monotonic() > deadline:
            return None
    return None


def first_of(seed: int) -> int:
    """The first 32-bit token of a seed's stream, as an attacker who read inputs.py computes it."""
    block = hmac.digest(key_for(seed), (0).to_bytes(8, "big"), "sha256")
    return int.from_bytes(block[:4], "big")


def test_the_same_seed_gives_the_same_inputs_and_another_seed_others() -> None:
    """Two runs with one seed send the host the same tokens; a third seed sends others."""
    seed = fresh_seed()
    first = seen_by_the_host(seed, {"1", "3"})
    assert len(first) >= 6
    assert seen_by_the_host(seed, {"1", "3"}) == first
    assert seen_by_the_host(seed + 1, {"1", "3"}) != first


def test_the_seed_a_run_draws_is_64_bits_from_secrets_and_lab_seed_chooses_it(
    monkeypatch: Any,
) -> None:
    """Fresh seeds spread over 64 bits (not 20); LAB_SEED=N, as the header prints it, is taken."""
    monkeypatch.delenv("LAB_SEED", raising=False)
    drawn = [draw_seed() for _ in range(32)]
    assert len(set(drawn)) == 32
    assert all(0 <= s < 1 << SEED_BITS for s in drawn)
    assert max(drawn) >= 1 << (SEED_BITS - 4)  # all 32 under 2**60: odds of 16**-32
    monkeypatch.setenv("LAB_SEED", str(drawn[0]))
    assert draw_seed() == drawn[0]


def test_the_old_seed_recovery_from_the_first_user_id_finds_nothing() -> None:
    """Every 20-bit seed tried against the first userId the host saw: none reproduces it.

    The attack is shown to work on a seed in that range first, so its failure
    on a real run's seed is the seed's size and not a broken attack.
    """
    small = secrets.randbelow(OLD_SEEDS)
    assert recover_seed(first_of(small), first_of, budget=60.0) == small
    seed = draw_seed()
    tokens = seen_by_the_host(seed, {"1"})
    assert int(tokens[0], 16) == first_of(seed)  # the host's first userId is the stream's first
    assert recover_seed(int(tokens[0], 16), first_of) is None
    old = random.Random  # and the derivation the old attack assumed gives nothing either
    assert recover_seed(int(tokens[0], 16), lambda s: old(s).getrandbits(32), 2.0) is None


def test_48_tokens_seen_do_not_predict_the_49th() -> None:
    """Reseeding random.Random from what was seen, or rebuilding its state, misses the next token.

    The same state recovery predicts random.Random's next output exactly: the
    attack works, and the stream is what defeats it.
    """
    stream = KeyedRandom(fresh_seed())
    seen = [stream.getrandbits(32) for _ in range(48)]
    after = stream.getrandbits(32)
    guesses = {random.Random(v).getrandbits(32) for v in seen}  # each token as a seed
    guesses.add(random.Random(sum(v << (32 * i) for i, v in enumerate(seen))).getrandbits(32))
    assert after not in guesses

    twister = random.Random(secrets.randbits(64))
    outputs = [twister.getrandbits(32) for _ in range(624)]
    assert predicted_by_state_recovery(outputs) == twister.getrandbits(32)
    outputs = [stream.getrandbits(32) for _ in range(624)]
    assert predicted_by_state_recovery(outputs) != stream.getrandbits(32)


def test_a_forked_host_cannot_read_the_drivers_key() -> None:
    """In a forked child the key is replaced before any tree code runs: its stream differs."""
    seed = fresh_seed()
    stream, twin = KeyedRandom(seed), KeyedRandom(seed)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: what a forked host would draw from the inherited object
        os.write(writer, stream.getrandbits(64).to_bytes(8, "big"))
        os._exit(0)
    os.close(writer)
    child = int.from_bytes(os.read(reader, 8), "big")
    os.close(reader)
    os.waitpid(pid, 0)
    expected = twin.getrandbits(64)
    assert child != expected
    assert stream.getrandbits(64) == expected  # the driver's own stream goes on
