"""What the filter says about a clip: each check's outcome and the clip's verdict.

Everything here turns into plain JSON (`to_dict`) so a person can audit a rejection:
the verdict names the first failing check, says why in words, and carries the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from retarget.filter.frames import runs

KEEP, TRIM, REJECT = "keep", "trim", "reject"


def _num(value: float | np.floating) -> float | None:
    """JSON-safe number (NaN and inf become None)."""
    value = float(value)
    return round(value, 6) if math.isfinite(value) else None


@dataclass(frozen=True)
class CheckResult:
    """One check on one clip: which frames fail it and the figure behind the decision."""

    name: str
    """Dotted name: ``<source>.<check>``, e.g. ``human.penetration``, ``robot.joint_speed``."""
    layer: str
    """'kinematic', 'dynamic', 'replay' or 'controller'."""
    bad: np.ndarray
    """(T,) bool, frames that fail."""
    worst: float
    """The check's figure at its worst frame, in `unit` (NaN when it does not apply)."""
    threshold: float
    """The limit `worst` is compared with, in `unit`."""
    unit: str
    reason: str
    """One sentence a person can check against the figures (empty when passed)."""
    figures: dict = field(default_factory=dict)
    """Further figures (floats, ints or short strings)."""

    @property
    def passed(self) -> bool:
        return not bool(np.any(self.bad))

    @property
    def bad_ranges(self) -> list[tuple[int, int]]:
        return runs(self.bad)

    def to_dict(self) -> dict:
        figures = {k: (_num(v) if isinstance(v, (float, np.floating)) else v) for k, v in self.figures.items()}
        return {
            "name": self.name,
            "layer": self.layer,
            "passed": self.passed,
            "worst": _num(self.worst),
            "threshold": _num(self.threshold),
            "unit": self.unit,
            "bad_frames": int(np.sum(self.bad)),
            "bad_ranges": [list(r) for r in self.bad_ranges],
            "reason": self.reason,
            "figures": figures,
        }


@dataclass(frozen=True)
class Repair:
    """A fix applied before checking (today: re-grounding a clip-wide height offset)."""

    name: str
    """e.g. ``human.reground`` or ``robot.reground``."""
    offset_m: float
    """Vertical shift applied to the whole clip [m] (negative moves it down)."""
    description: str

    def to_dict(self) -> dict:
        return {"name": self.name, "offset_m": _num(self.offset_m), "description": self.description}


@dataclass(frozen=True)
class Verdict:
    """The filter's decision on one clip."""

    clip: str
    decision: str
    """'keep', 'trim' or 'reject'."""
    num_frames: int
    fps: float
    kept_ranges: tuple[tuple[int, int], ...]
    """Frame ranges (start, stop exclusive) to keep, longest first; the whole clip for 'keep'."""
    first_failure: str | None
    """Name of the first failing check (checks run in layer order), None when all pass."""
    reason: str
    checks: tuple[CheckResult, ...]
    repairs: tuple[Repair, ...] = ()
    seconds_per_layer: dict = field(default_factory=dict)
    """Wall time spent in each layer [s]."""
    replay: dict = field(default_factory=dict)
    """Replay figures per replayed range (see :mod:`retarget.filter.replay`)."""
    controller: dict = field(default_factory=dict)
    """Controller-layer figures (see :mod:`retarget.controller`): whether it decided, its check, and the
    checks it overrode (reported, not deciding)."""

    @property
    def kept_frames(self) -> int:
        return int(sum(b - a for a, b in self.kept_ranges))

    def check(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check {name!r}; checks: {', '.join(c.name for c in self.checks)}")

    @property
    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict:
        first = None if self.first_failure is None else self.check(self.first_failure)
        return {
            "clip": self.clip,
            "decision": self.decision,
            "num_frames": self.num_frames,
            "fps": _num(self.fps),
            "kept_ranges": [list(r) for r in self.kept_ranges],
            "kept_frames": self.kept_frames,
            "first_failure": self.first_failure,
            "reason": self.reason,
            "first_failure_figures": None if first is None else first.to_dict(),
            "repairs": [r.to_dict() for r in self.repairs],
            "checks": [c.to_dict() for c in self.checks],
            "seconds_per_layer": {k: _num(v) for k, v in self.seconds_per_layer.items()},
            "replay": self.replay,
            "controller": self.controller,
        }
