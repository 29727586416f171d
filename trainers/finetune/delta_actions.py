"""Frozen delta actions π^Δ(s, a) for a batch of environments, in policy action units.

The simulator of stage 3 receives a + π^Δ(s, a); the policy never sees Δa. Every implementation
maps the batched environment state (read from a :class:`~trainers.env.TrackingEnv`) and the nominal
PD target q*(a) to Δa (N, D). They hold no trainable state: the learned MLP is frozen
(``requires_grad_(False)``, evaluated under ``torch.no_grad``), so no policy gradient can reach it.

``--delta`` specs: a learned model file ``DELTA.pt`` (:mod:`trainers.delta.learned`, or an ensemble of such fits:
:mod:`trainers.delta.ensemble`),
``analytic:PROFILE`` (the closed-form soft-joint Δa of a "real" profile), ``noise:STD`` (Gaussian
action noise of that standard deviation, action units: the paper's ActionNoise ablation) or
``constant:VALUE`` (every joint, action units — for checks). STD and VALUE must be finite and within
:data:`MAX_DELTA_ACTION`; a spec outside it is refused when it is parsed, naming ``--delta``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from retarget.errors import AsapRetargetError
from robots.registry import load_robot_spec
from trainers.config import SimConfig
from trainers.delta.analytic import stiffness_ratios
from trainers.delta.ensemble import DeltaEnsemble, load_delta_file
from trainers.delta.learned import LearnedDelta
from trainers.real.profiles import get_profile


class DeltaSpecError(AsapRetargetError):
    """A ``--delta`` value that names no usable delta action."""


MAX_DELTA_ACTION = SimConfig.action_clip
"""Largest |VALUE| of ``constant:`` and STD of ``noise:`` [action units]. The simulator clips a + Δa to the action
clip (±100 by default): a larger Δa pins every PD target to the clip, and inf or NaN reach the physics as NaN."""


class DeltaAction(Protocol):
    """Δa (N, D) in action units from the nominal targets and the state before the step."""

    name: str

    def __call__(
        self,
        target: np.ndarray,
        q: np.ndarray,
        qd: np.ndarray,
        root_quat_w: np.ndarray,
        base_ang_vel_b: np.ndarray,
        action_scale: float,
        previous_target: np.ndarray | None = None,
    ) -> np.ndarray: ...


class ConstantDeltaAction:
    """The same Δa for every state (action units)."""

    def __init__(self, value: float | np.ndarray):
        self.value = np.asarray(value, dtype=float)
        self.name = f"constant:{float(self.value.mean()):g}"

    def __call__(self, target, q, qd, root_quat_w, base_ang_vel_b, action_scale, previous_target=None):
        return np.broadcast_to(self.value, target.shape).copy()


class NoiseDeltaAction:
    """Δa ~ N(0, std²) per joint and step, independent of the state (the ActionNoise baseline)."""

    def __init__(self, std: float, seed: int = 0):
        if not std >= 0.0:
            raise DeltaSpecError(f"noise:{std}: the standard deviation must be ≥ 0")
        self.std = float(std)
        self.rng = np.random.default_rng(seed)
        self.name = f"noise:{self.std:g}"

    def __call__(self, target, q, qd, root_quat_w, base_ang_vel_b, action_scale, previous_target=None):
        return self.rng.normal(0.0, self.std, target.shape)


class AnalyticDeltaAction:
    """Δa = (r − 1)(q* − q)/s: a nominal PD that acts like the profile's softer joints (held for a policy step)."""

    def __init__(self, profile: str):
        self.ratio = stiffness_ratios(get_profile(profile), load_robot_spec())
        self.name = f"analytic:{profile}"

    def __call__(self, target, q, qd, root_quat_w, base_ang_vel_b, action_scale, previous_target=None):
        return (self.ratio - 1.0) * (target - q) / action_scale


class LearnedDeltaAction:
    """The learned π^Δ (one fit, or an ensemble whose member ``i mod K`` acts on environment ``i``), frozen:
    δ [rad] on its joints, returned in action units (δ / s)."""

    def __init__(self, learned: LearnedDelta | DeltaEnsemble, name: str = "learned"):
        self.learned = learned
        members = learned.members if isinstance(learned, DeltaEnsemble) else [learned]
        for member in members:
            member.model.eval().requires_grad_(False)
        self.reads_previous_target = any(m.cfg.previous_target for m in members)
        self.name = name

    def __call__(self, target, q, qd, root_quat_w, base_ang_vel_b, action_scale, previous_target=None):
        if self.reads_previous_target and previous_target is None:
            raise DeltaSpecError(f"{self.name} reads the previous PD target, which the caller did not pass")
        return self.learned.delta_targets(target, q, qd, root_quat_w, base_ang_vel_b, previous_target) / action_scale


def load_delta_action(spec: str | Path, seed: int = 0) -> DeltaAction:
    """A delta action from a ``--delta`` spec (see the module docstring); ``seed`` seeds ``noise:``."""
    text = str(spec)
    if text.startswith("analytic:"):
        try:
            return AnalyticDeltaAction(text.split(":", 1)[1])
        except AsapRetargetError as exc:
            raise DeltaSpecError(f"--delta {text}: {exc}") from exc
    if text.startswith("noise:"):
        return NoiseDeltaAction(_spec_number(text, "the standard deviation", minimum=0.0), seed)
    if text.startswith("constant:"):
        return ConstantDeltaAction(_spec_number(text, "the value", minimum=-MAX_DELTA_ACTION))
    path = Path(text)
    if not path.is_file():
        raise DeltaSpecError(f"{path}: no such delta model file (or use analytic:PROFILE / noise:STD / constant:VALUE)")
    return LearnedDeltaAction(load_delta_file(path), name=f"learned:{path.name}")


def _spec_number(text: str, what: str, minimum: float) -> float:
    """The number after ``KIND:`` in a ``--delta`` spec, finite and in [`minimum`, MAX_DELTA_ACTION]."""
    try:
        value = float(text.split(":", 1)[1])
    except ValueError as exc:
        raise DeltaSpecError(f"--delta {text}: {what} is not a number") from exc
    if not minimum <= value <= MAX_DELTA_ACTION:  # NaN fails both comparisons
        raise DeltaSpecError(
            f"--delta {text}: {what} must be a finite number from {minimum:g} to {MAX_DELTA_ACTION:g} action units "
            f"(the simulator clips a + Δa to ±{MAX_DELTA_ACTION:g})"
        )
    return value
