"""The bench-log linear fit: the classroom version of the delta action.

Per bench joint j, the nominal simulator's PD target gets

    δ_j = a_j·(q*_j − q_j) + b_j·q̇_j          (recomputed every policy step, 20 ms, and held)

with eight coefficients for the four joints. They are chosen to minimise the replay error: the
nominal G1 on the gantry starts from the log's first state, receives the log's targets plus δ,
and its joint positions are compared with the log's at every tick (scipy ``least_squares``
on that residual vector, finite-difference Jacobian; each evaluation is one 4 s replay).

Why the coefficients come out negative with soft or delayed joints: δ must make the nominal
simulator track *worse*, as the real joints do. a < 0 scales the stiffness term to (1 + a)·Kp
(a = r − 1 exactly for a stiffness ratio r, see :mod:`trainers.delta.analytic`); b < 0 adds
Kp·|b| of damping, which makes the joint lag its target like a delayed actuator does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from trainers.config import SimConfig
from trainers.real.bench import BenchLog
from trainers.real.model import build_real_model
from trainers.real.stepper import PdRobot


@dataclass(frozen=True)
class LinearDelta:
    """δ_j = a_j·(q*_j − q_j) + b_j·q̇_j on a few joints, in PD-target units [rad]."""

    joints: tuple[str, ...]
    """Joints the correction acts on."""
    a: np.ndarray
    """(J,) multiplier of the tracking error q* − q [1]."""
    b: np.ndarray
    """(J,) multiplier of the joint velocity [s]."""

    def correction(self, joint_names: tuple[str, ...]):
        ids = np.array([joint_names.index(j) for j in self.joints])
        a, b = np.asarray(self.a), np.asarray(self.b)

        def delta(target: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
            out = np.zeros_like(target)
            out[ids] = a * (target[ids] - q[ids]) + b * qd[ids]
            return out

        return delta


@dataclass(frozen=True)
class LinearFitConfig:
    """How the eight coefficients are searched."""

    a_bounds: tuple[float, float] = (-0.9, 2.0)
    """Range of a [1]; a ≤ −1 would make the effective stiffness (1 + a)·Kp vanish or flip."""
    b_bounds: tuple[float, float] = (-0.2, 0.2)
    """Range of b [s]."""
    max_nfev: int = 60
    """Most least-squares iterations (each costs 1 + 2·J replays with the finite-difference Jacobian)."""
    diff_step: float = 1e-3
    """Relative finite-difference step of the Jacobian."""


@dataclass(frozen=True)
class LinearFitResult:
    delta: LinearDelta
    rms_before_deg: float
    """RMS over bench joints and ticks of sim − real joint position, without δ [deg]."""
    rms_after_deg: float
    """The same with the fitted δ [deg]."""
    replays: int
    """Simulated replays the fit ran."""
    wall_s: float


def _log_columns(log: BenchLog, robot: PdRobot) -> tuple[np.ndarray, np.ndarray]:
    """Map the log's columns to the simulator's joint order: (sim ids, log ids) of the joints both have."""
    sim_ids, log_ids = [], []
    for i, name in enumerate(robot.robot.joint_names):
        if name in log.joint_names:
            sim_ids.append(i)
            log_ids.append(log.joint_names.index(name))
    return np.array(sim_ids), np.array(log_ids)


class BenchReplay:
    """Replays a bench log's targets in the nominal gantry G1, optionally with a linear δ."""

    def __init__(self, log: BenchLog, sim: SimConfig | None = None):
        self.log = log
        self.robot = PdRobot(build_real_model("nominal", sim, fixed_base=True), sim)
        sim_ids, log_ids = _log_columns(log, self.robot)
        d = self.robot.robot.num_dof
        self.targets = np.zeros((len(log.time_s), d))
        self.targets[:, sim_ids] = log.pd_target[:, log_ids]
        self.q0, self.qd0 = np.zeros(d), np.zeros(d)
        self.q0[sim_ids], self.qd0[sim_ids] = log.dof_pos[0, log_ids], log.dof_vel[0, log_ids]
        self.bench_sim_ids = np.array([self.robot.robot.joint_names.index(j) for j in log.bench_joints])
        self.real_q = log.dof_pos[1:, log.bench_ids]

    def run(self, delta: LinearDelta | None) -> np.ndarray:
        """(T − 1, J) simulated bench-joint positions at ticks 1 … T−1."""
        self.robot.reset(self.q0, self.qd0, targets=self.targets[0])
        correction = None if delta is None else delta.correction(self.robot.robot.joint_names)
        q, _ = self.robot.run_targets(self.targets[:-1], correction)
        return q[1:, self.bench_sim_ids]

    def residual(self, delta: LinearDelta | None) -> np.ndarray:
        err = self.run(delta) - self.real_q
        # A diverged replay must read as a bad fit, not crash the optimizer.
        return np.nan_to_num(err, nan=10.0, posinf=10.0, neginf=-10.0).ravel()

    def rms_deg(self, delta: LinearDelta | None) -> float:
        return float(np.degrees(np.sqrt(np.mean(self.residual(delta) ** 2))))


def fit_linear_delta(
    log: BenchLog, cfg: LinearFitConfig | None = None, sim: SimConfig | None = None
) -> LinearFitResult:
    """Fit a, b per bench joint by least squares on the nominal replay error."""
    cfg = LinearFitConfig() if cfg is None else cfg
    start = time.perf_counter()
    replay = BenchReplay(log, sim)
    n = len(log.bench_joints)

    def make(x: np.ndarray) -> LinearDelta:
        return LinearDelta(log.bench_joints, x[:n].copy(), x[n:].copy())

    lower = np.r_[np.full(n, cfg.a_bounds[0]), np.full(n, cfg.b_bounds[0])]
    upper = np.r_[np.full(n, cfg.a_bounds[1]), np.full(n, cfg.b_bounds[1])]
    before = replay.rms_deg(None)
    solution = least_squares(
        lambda x: replay.residual(make(x)),
        np.zeros(2 * n),
        bounds=(lower, upper),
        diff_step=cfg.diff_step,
        max_nfev=cfg.max_nfev,
        x_scale=np.r_[np.full(n, 0.1), np.full(n, 0.01)],
    )
    best = make(solution.x)
    replays = int(solution.nfev + (solution.njev or 0) * 2 * n) + 2
    return LinearFitResult(best, before, replay.rms_deg(best), replays, time.perf_counter() - start)
