"""The bench log: a G1 hung from a gantry whose four left-leg joints follow a 4 s target trajectory at 50 Hz.

The target trajectory (:func:`bench_targets`) moves left hip pitch, hip roll, knee and ankle
pitch, each a sum of two sines (a slow large one and a faster small one, incommensurate
frequencies, so the log excites both stiffness and damping) around a mid-range angle, well
inside the joint limits; every other joint's target is 0.

Log file (``.npz``; a lab with a G1 on a gantry writes the same keys from its robot):

=================  =========  ======================================================================
key                shape      meaning
=================  =========  ======================================================================
``time_s``         (T,)       time of each control tick [s], uniform at 1/``fps``
``fps``            ()         control rate [Hz] (50)
``joint_names``    (D,)       joint names, in the column order of the arrays below
``bench_joints``   (J,)       the joints the trajectory moves (a subset of ``joint_names``)
``dof_pos``        (T, D)     measured joint positions at each tick, before the target is sent [rad]
``dof_vel``        (T, D)     measured joint velocities at each tick [rad/s]
``pd_target``      (T, D)     PD target sent at each tick and held until the next [rad]
``source``         ()         provenance: ``"real:<profile>"`` for a simulated log, free text for a robot
=================  =========  ======================================================================

The last row's target is never observed acting (the log ends); the replay uses ticks 0…T−2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.asap_pkl import atomic_write
from retarget.errors import MotionFileError
from retarget.npz_io import read_npz
from trainers.config import SimConfig
from trainers.real.model import build_real_model
from trainers.real.profiles import RealProfile, get_profile
from trainers.real.stepper import PdRobot

BENCH_JOINTS: tuple[str, ...] = (
    "left_hip_pitch_joint",
    "left_hip_roll_joint",
    "left_knee_joint",
    "left_ankle_pitch_joint",
)
# Per joint: centre [rad], then (amplitude [rad], frequency [Hz], phase [rad]) of two sines.
_TRAJECTORY: tuple[tuple[float, tuple[float, float, float], tuple[float, float, float]], ...] = (
    (-0.4, (0.5, 0.5, 0.0), (0.15, 1.7, 1.0)),  # hip pitch in [−2.53, 2.88]
    (0.3, (0.2, 0.7, 0.5), (0.08, 2.3, 0.0)),  # hip roll in [−0.52, 2.97]
    (0.9, (0.5, 0.6, 0.5), (0.15, 2.1, 0.0)),  # knee in [−0.09, 2.88]
    (-0.2, (0.25, 0.9, 0.0), (0.1, 2.9, 2.0)),  # ankle pitch in [−0.87, 0.52]
)
LOG_KEYS: tuple[str, ...] = ("time_s", "fps", "joint_names", "bench_joints", "dof_pos", "dof_vel", "pd_target")


@dataclass(frozen=True)
class BenchLog:
    """A fixed-base tracking log (see the module docstring for the file keys)."""

    time_s: np.ndarray
    fps: float
    joint_names: tuple[str, ...]
    bench_joints: tuple[str, ...]
    dof_pos: np.ndarray
    dof_vel: np.ndarray
    pd_target: np.ndarray
    source: str = ""

    @property
    def bench_ids(self) -> np.ndarray:
        return np.array([self.joint_names.index(j) for j in self.bench_joints])


def bench_targets(joint_names: tuple[str, ...], duration_s: float = 4.0, fps: float = 50.0) -> np.ndarray:
    """(T, D) targets: the four bench joints follow their sums of sines, every other joint 0 [rad]."""
    t = np.arange(round(duration_s * fps) + 1) / fps
    targets = np.zeros((t.size, len(joint_names)))
    for name, (centre, *sines) in zip(BENCH_JOINTS, _TRAJECTORY):
        targets[:, joint_names.index(name)] = centre + sum(a * np.sin(2 * np.pi * f * t + p) for a, f, p in sines)
    return targets


def record_bench_log(profile: RealProfile | str, duration_s: float = 4.0, sim: SimConfig | None = None) -> BenchLog:
    """Run the bench trajectory on the gantry-mounted "real" ``profile`` and log it."""
    sim = SimConfig() if sim is None else sim
    profile = get_profile(profile)
    robot = PdRobot(build_real_model(profile, sim, fixed_base=True), sim)
    fps = 1.0 / robot.policy_dt_s
    targets = bench_targets(robot.robot.joint_names, duration_s, fps)
    robot.reset(targets[0], targets=targets[0])
    q, qd = robot.run_targets(targets[:-1])
    return BenchLog(
        np.arange(len(targets)) / fps,
        fps,
        robot.robot.joint_names,
        BENCH_JOINTS,
        q,
        qd,
        targets,
        f"real:{profile.name}",
    )


def write_bench_log(path: str | Path, log: BenchLog) -> Path:
    path = Path(path)
    arrays = {
        "time_s": log.time_s,
        "fps": np.float64(log.fps),
        "joint_names": np.array(log.joint_names),
        "bench_joints": np.array(log.bench_joints),
        "dof_pos": log.dof_pos,
        "dof_vel": log.dof_vel,
        "pd_target": log.pd_target,
        "source": np.array(log.source),
    }

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    atomic_write(path, write)
    return path


def read_bench_log(path: str | Path) -> BenchLog:
    """Read and check a bench log. Raises :class:`MotionFileError` naming the file and the problem."""
    path = Path(path)
    data = read_npz(path, "bench log", tuple(LOG_KEYS))
    names = tuple(str(n) for n in data["joint_names"])
    bench = tuple(str(n) for n in data["bench_joints"])
    shape = (data["time_s"].shape[0], len(names))
    for key in ("dof_pos", "dof_vel", "pd_target"):
        if data[key].shape != shape:
            raise MotionFileError(path, f"{key!r} has shape {data[key].shape}, expected (T, D) = {shape}")
        if not np.isfinite(data[key]).all():
            raise MotionFileError(path, f"{key!r} holds NaN or infinite values")
    unknown = [j for j in bench if j not in names]
    if unknown or not bench:
        raise MotionFileError(path, f"bench_joints {list(bench)} must be a non-empty subset of joint_names")
    if shape[0] < 3:
        raise MotionFileError(path, f"bench log has {shape[0]} ticks; need at least 3")
    source = str(data["source"]) if "source" in data else ""
    return BenchLog(
        data["time_s"], float(data["fps"]), names, bench, data["dof_pos"], data["dof_vel"], data["pd_target"], source
    )
