"""The SysID baseline: identify a few physical parameters of the "real" robot from its recorded rollouts.

What is identified is what a lab would calibrate: PD stiffness ratios per joint group (legs, ankles,
waist, arms), the actuation delay (in physics steps) and a torso mass offset. The fit minimizes
the one-step prediction error of the recorded transitions (:mod:`trainers.delta.one_step`) by
coordinate descent over a grid per parameter — every candidate is a real MuJoCo model (compiled once
per delay and torso mass, its Kp ratios written in: :mod:`trainers.delta.gain_models`), each
evaluation a replay of the transitions, so no gradients are needed and the grid keeps the answer
interpretable (the recorded start states are prepared once: :mod:`trainers.delta.prepared_replay`).
The result is a :class:`~trainers.real.profiles.RealProfile` written as JSON, which
``train finetune --sim real --real sysid.json`` fine-tunes in.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trainers.config import SimConfig, sim_config_from_jsonable
from trainers.defaults import DEFAULT_NUM_THREADS
from trainers.delta.collection import Trajectory
from trainers.delta.gain_models import GainEditedModels
from trainers.delta.one_step import recorded_next, transitions
from trainers.delta.prepared_replay import PreparedReplay
from trainers.real.profiles import RealProfile

KP_GROUPS: dict[str, tuple[str, ...]] = {
    "ankles": ("ankle_pitch_joint", "ankle_roll_joint"),
    "legs": ("hip_pitch_joint", "hip_roll_joint", "hip_yaw_joint", "knee_joint"),
    "waist": ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"),
    "arms": ("shoulder_pitch_joint", "shoulder_roll_joint", "shoulder_yaw_joint", "elbow_joint"),
}
"""Joint groups sharing one identified Kp ratio (joint-name suffixes)."""


@dataclass(frozen=True)
class SysIdConfig:
    """Search grids and budget."""

    kp_ratios: tuple[float, ...] = (0.5, 0.6, 0.65, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25)
    """Candidate Kp multipliers of each joint group."""
    delays_physics_steps: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6)
    """Candidate actuation delays [physics steps of 5 ms]."""
    torso_mass_offsets_kg: tuple[float, ...] = (-2.0, -1.0, 0.0, 1.0, 2.0, 3.0)
    """Candidate torso mass offsets [kg]."""
    rounds: int = 2
    """Coordinate-descent sweeps over all parameters."""
    max_transitions: int = 400
    """Transitions used (evenly subsampled), to bound each evaluation's time."""


@dataclass(frozen=True)
class SysIdResult:
    profile: RealProfile
    """The identified robot, as a profile."""
    parameters: dict[str, float]
    """Identified value per parameter (kp_<group>, delay_physics_steps, torso_mass_offset_kg)."""
    rms_nominal: float
    """One-step residual RMS of the nominal simulator."""
    rms_identified: float
    """One-step residual RMS of the identified simulator."""
    evaluations: int
    """Candidate models replayed."""


def profile_from_parameters(params: dict[str, float], name: str = "sysid") -> RealProfile:
    """The :class:`RealProfile` of a parameter set (groups with ratio 1 are left out)."""
    kp = tuple(
        (suffix, float(params[f"kp_{group}"]))
        for group, suffixes in KP_GROUPS.items()
        for suffix in suffixes
        if params.get(f"kp_{group}", 1.0) != 1.0
    )
    text = ", ".join(f"{k}={v:g}" for k, v in params.items())
    return RealProfile(
        name,
        f"identified from rollouts: {text}",
        kp_scale=kp,
        delay_physics_steps=int(params["delay_physics_steps"]),
        torso_mass_offset_kg=float(params["torso_mass_offset_kg"]),
    )


def recorded_sim_config(trajs: list[Trajectory]) -> SimConfig:
    """The ``SimConfig`` the rollouts were simulated with (the default for robot logs, which record none).

    A replay must step as the recording did: another decimation or action offset would make every candidate
    model mispredict by the same mismatch, and the search would fit the mismatch instead of the robot.
    """
    from retarget.errors import ConfigError

    # Threads change no trajectory; rollouts collected on machines of different sizes replay alike.
    recorded = {
        dataclasses.replace(sim_config_from_jsonable(json.loads(t.sim_config_json)), num_threads=DEFAULT_NUM_THREADS)
        for t in trajs
        if t.sim_config_json
    }
    if len(recorded) > 1:
        raise ConfigError("the rollouts were simulated with different SimConfigs; identify each set on its own")
    return recorded.pop() if recorded else SimConfig()


def identify(
    trajs: list[Trajectory],
    cfg: SysIdConfig | None = None,
    sim: SimConfig | None = None,
    on_eval: Callable[[dict[str, float], float], None] | None = None,
) -> SysIdResult:
    """Coordinate descent of the one-step error over the parameter grids, from the nominal robot."""
    cfg = SysIdConfig() if cfg is None else cfg
    sim = recorded_sim_config(trajs) if sim is None else sim
    pairs = transitions(trajs)
    if not pairs:
        raise ValueError("system identification needs at least one recorded transition")
    keep = np.unique(np.linspace(0, len(pairs) - 1, min(cfg.max_transitions, len(pairs))).astype(int))
    pairs = [pairs[i] for i in keep]
    goal = recorded_next(pairs)
    # Delay first: searched after the gains, a delay is mimicked by softer joints (a worse local optimum).
    grids: dict[str, tuple[float, ...]] = {"delay_physics_steps": tuple(float(d) for d in cfg.delays_physics_steps)}
    grids.update({f"kp_{g}": cfg.kp_ratios for g in KP_GROUPS})
    grids["torso_mass_offset_kg"] = cfg.torso_mass_offsets_kg
    params = {**{f"kp_{g}": 1.0 for g in KP_GROUPS}, "delay_physics_steps": 0.0, "torso_mass_offset_kg": 0.0}
    cache: dict[tuple, float] = {}
    models = GainEditedModels(sim)
    replay = PreparedReplay(pairs, sim)

    def cost(p: dict[str, float]) -> float:
        key = tuple(sorted(p.items()))
        if key not in cache:
            cache[key] = replay.rms(models.model(profile_from_parameters(p)), goal)
            if on_eval is not None:
                on_eval(dict(p), cache[key])
        return cache[key]

    rms_nominal = cost(params)
    for _ in range(cfg.rounds):
        for name, grid in grids.items():
            scores = [cost({**params, name: value}) for value in grid]
            params[name] = grid[int(np.argmin(scores))]
    best = cost(params)
    return SysIdResult(profile_from_parameters(params), dict(params), rms_nominal, best, len(cache))
