"""Fault injection: seeded API errors, latency, dropped watches, compaction, a rogue binder.

Everything random draws from one ``random.Random(seed)`` so a failing run can be
replayed. Every injected fault is counted in :attr:`Faults.counters` (served at
``GET /sim/stats``), so a test can assert that faults really happened.

Error codes follow what a scheduler must survive from a real apiserver: 500
InternalError, 503 ServiceUnavailable and 429 TooManyRequests with ``Retry-After``.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from scheduler.sim.errors import ApiError

VERBS = ("create", "update", "patch", "delete", "bind", "get", "list", "watch")

_ERRORS: dict[int, tuple[str, str]] = {
    500: ("InternalError", "Internal error occurred: injected fault"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    429: (
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
    ),
}


@dataclass
class FaultConfig:
    """What to inject. All defaults mean "no faults"."""

    fail_rates: dict[str, float] = field(default_factory=dict)
    """verb -> probability of an injected error per request; verb ``*`` applies to all."""
    fail_codes: tuple[int, ...] = (500, 503, 429)
    """codes drawn uniformly for each injected error."""
    retry_after: int = 1
    """``Retry-After`` seconds on 429s."""
    latency: float = 0.0
    """seconds added before every resource request is handled."""
    drop_watches_every: float = 0.0
    """close every open watch stream this often (seconds); 0 = never."""
    compact_every: float = 0.0
    """drop all watch history this often (seconds) so resumes get 410; 0 = never."""
    compact_gap: float = 0.5
    """seconds before each compaction during which watches are closed and new ones wait (a
    partition: writes go on, so the resumes after the compaction miss history and get 410)."""
    rogue_bind_fraction: float = 0.0
    """fraction of new pending pods that a rogue binder assigns before anyone else."""
    rogue_scheduler_name: str | None = None
    """only pods with this schedulerName are taken by the rogue binder (None = any)."""
    rogue_delay: float = 0.05
    """seconds after creation when the rogue binds, unless a bind request comes first."""
    accept_invalid: bool = False
    """store what kube-apiserver would refuse to decode, validate or admit (a quantity of
    ``1_000``, a negative request, a bare ``spec.priority``): for tests of a client's own
    defences against bad objects."""
    seed: int | None = 0

    @staticmethod
    def parse_rates(items: list[str]) -> dict[str, float]:
        """``["bind=0.1", "*=0.01"]`` -> ``{"bind": 0.1, "*": 0.01}``; bad input -> ValueError."""
        rates: dict[str, float] = {}
        for item in items:
            verb, sep, prob = item.partition("=")
            if not sep or (verb not in VERBS and verb != "*"):
                raise ValueError(
                    f"bad --fail-rate {item!r}: want VERB=P with VERB in {', '.join(VERBS)} or *"
                )
            p = float(prob)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"bad --fail-rate {item!r}: P must be within [0, 1]")
            rates[verb] = p
        return rates


class Faults:
    """The live injector: config, seeded RNG and counters."""

    def __init__(self, config: FaultConfig | None = None) -> None:
        self.config = config or FaultConfig()
        self.rng = random.Random(self.config.seed)
        self.counters: Counter[str] = Counter()

    def maybe_fail(self, verb: str) -> None:
        """Raise an injected ApiError for this verb with its configured probability."""
        rates = self.config.fail_rates
        if not rates:
            return
        p = rates.get(verb, rates.get("*", 0.0))
        if p <= 0.0 or self.rng.random() >= p:
            return
        code = self.rng.choice(self.config.fail_codes)
        reason, message = _ERRORS[code]
        self.counters[f"error.{verb}.{code}"] += 1
        self.counters["errors"] += 1
        headers = {"Retry-After": str(self.config.retry_after)} if code == 429 else None
        details = {"retryAfterSeconds": self.config.retry_after} if code == 429 else None
        raise ApiError(code, reason, message, details=details, headers=headers)

    def count(self, name: str, n: int = 1) -> None:
        """Count a fault injected elsewhere (watch drop, compaction, rogue bind)."""
        self.counters[name] += n

    def stats(self) -> dict[str, int]:
        """A JSON-ready copy of the counters."""
        return dict(self.counters)
