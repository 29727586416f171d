"""The learned delta action π^Δ(s, a): a small MLP fitted to recorded "real" transitions.

The paper trains π^Δ with PPO, resetting to recorded states and rewarding the match of the next
states (action-norm penalty 0.1). Here the simulator is cheap to reset and its one-step response
is smooth in the target, so the fit is done in two supervised stages instead:

1. **Per-transition labels.** From each recorded state s_t, with the recorded target q*_t, find the
   δ_t (on the chosen joints, PD-target units) that makes the nominal simulator's next joint
   positions and velocities, and its pelvis pose and velocity, match the recorded s_{t+1} (the pelvis
   terms matter: a stance ankle barely moves, its torque shows in how the whole body tips):
   Levenberg–Marquardt on the one-step residual with a finite-difference Jacobian (J + 1 simulated
   policy steps per iteration), the paper's action-norm penalty as a ridge term, and a bound.
2. **Regression.** A model maps features of (s_t, a_t) to δ_t: an MLP (MSE, Adam), or the per-joint
   linear model of :mod:`trainers.delta.per_joint` (closed form), which transfers to other clips.

Features: q* − q, q̇·0.05 on every joint, the base angular velocity (body frame) ·0.25 and projected
gravity — ASAP's actor terms, plus the tracking error the PD acts on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch

from retarget.errors import AsapRetargetError
from retarget.rotations import quat_conj, quat_mul, quat_to_matrix, quat_to_rotvec
from robots.registry import load_robot_spec
from trainers.delta.collection import Trajectory
from trainers.delta.defaults import (
    BOUNDED_KINDS,
    DEFAULT_JOINTS,
    DEFAULT_MLP_EPOCHS,
    DEFAULT_MODEL,
    DEFAULT_PREVIOUS_TARGET,
    LEGACY_FILE_MODEL,
    LEGACY_FILE_PREVIOUS_TARGET,
    MODEL_KINDS,
    PER_JOINT_KINDS,
)
from trainers.delta.one_step import previous_targets, state_vector
from trainers.delta.per_joint import (
    PerJointLinear,
    fit_per_joint_ridge,
    kind_terms,
    normalized_bounds,
    own_columns,
)
from trainers.delta.replay import reset_to_frame
from trainers.observations import projected_gravity_b
from trainers.real.model import build_real_model
from trainers.real.stepper import PdRobot
from trainers.reproducible import reproducible_threads, save_torch

JOINT_SETS: dict[str, tuple[str, ...]] = {
    "ankles": ("ankle_pitch_joint", "ankle_roll_joint"),
    "legs": (
        "hip_pitch_joint",
        "hip_roll_joint",
        "hip_yaw_joint",
        "knee_joint",
        "ankle_pitch_joint",
        "ankle_roll_joint",
    ),
    "all": ("_joint",),
}


@dataclass(frozen=True)
class LearnedDeltaConfig:
    """How π^Δ is fitted."""

    joints: str = DEFAULT_JOINTS
    """Joint subset Δa acts on: ankles (the paper's real-robot model), legs or all."""
    action_norm_weight: float = 1e-6
    """Ridge penalty w·‖δ‖² next to the squared one-step residual [rad²] in the labels: the action-norm
    penalty's role (the paper's 0.1 weighs a reward sum, not this residual). A stance ankle's one-step
    effect is small, so w must be too: 1e-3 shrank the ankle-pitch labels to 60 % of the analytic Δa;
    1e-6 leaves them within 7–17 % and still settles directions the next state cannot see."""
    label_iters: int = 4
    """Levenberg–Marquardt iterations per transition label (each: one finite-difference Jacobian)."""
    max_label_rad: float = 0.5
    """Bound on every label component [rad]. Where the real joint saturates (torque limits) or sticks (dry
    friction), its next state stops depending on the target and an unbounded step runs off to radians."""
    fd_step_rad: float = 1e-3
    """Finite-difference step of the one-step Jacobian [rad]."""
    hidden: tuple[int, ...] = (128, 128)
    """MLP hidden layers (ELU)."""
    epochs: int = DEFAULT_MLP_EPOCHS
    """Full-batch Adam steps."""
    lr: float = 3e-3
    """Adam learning rate."""
    seed: int = 0
    """Torch seed."""
    model: str = DEFAULT_MODEL
    """mlp: an ELU MLP on every feature; per_joint_linear: each joint's δ linear in its own q* − q, q̇ and
    q*_{t−1} − q*_t (:mod:`trainers.delta.per_joint`, fitted in closed form), the actuator-shaped model that
    transfers to clips it was not fitted on; per_joint_physical: the same with each coefficient held to what an
    actuator can be (stiffness ratio 0-2, added damping only, a delay of 0-1 policy step); per_joint_undamped: the
    bounded one without the q̇ term (:mod:`trainers.delta.per_joint`)."""
    ridge: float = 1.0
    """per_joint_linear: ridge weight on the coefficients of the normalized features (the labels' squared
    error is summed over transitions, so a few hundred transitions outweigh it)."""
    previous_target: bool = DEFAULT_PREVIOUS_TARGET
    """Also feed q*_{t−1} − q*_t, the change of target since the last policy step. A delayed robot still executes
    the previous target for part of the step, so without this input no Δa can represent a delay (and a Δa fitted
    to a delayed robot overfits). Files written before it existed are read without it."""


class DeltaModelError(AsapRetargetError):
    """A delta-model file that cannot be used."""


def _check_model_kind(kind: str) -> None:
    if kind not in MODEL_KINDS:
        raise DeltaModelError(f"unknown delta model {kind!r}; valid choices: {', '.join(MODEL_KINDS)}")


def joint_ids(subset: str, joint_names: tuple[str, ...]) -> np.ndarray:
    if subset not in JOINT_SETS:
        raise DeltaModelError(f"unknown joint subset {subset!r}; valid choices: {', '.join(JOINT_SETS)}")
    return np.array([i for i, n in enumerate(joint_names) if n.endswith(JOINT_SETS[subset])])


def batched_features(target, q, qd, root_quat_w, base_ang_vel_b, previous_target=None) -> np.ndarray:
    """(N, F) input of π^Δ for N states and targets: [q* − q (D), 0.05·q̇ (D), 0.25·ω_b (3), projected gravity (3)]
    (+ q*_{t−1} − q*_t (D) when ``previous_target`` is given); ω in the pelvis frame, as MuJoCo's free joint."""
    parts = [target - q, 0.05 * qd, 0.25 * base_ang_vel_b, projected_gravity_b(root_quat_w)]
    if previous_target is not None:
        parts.append(previous_target - target)
    return np.concatenate(parts, axis=1)


def features(
    target: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    root_quat_w: np.ndarray,
    root_ang_vel_w: np.ndarray,
    previous_target: np.ndarray | None = None,
) -> np.ndarray:
    """(F,) :func:`batched_features` of one state, its angular velocity given in the world frame."""
    ang_b = quat_to_matrix(root_quat_w).T @ root_ang_vel_w
    prev = None if previous_target is None else np.asarray(previous_target)[None]
    return batched_features(
        np.asarray(target)[None],
        np.asarray(q)[None],
        np.asarray(qd)[None],
        np.asarray(root_quat_w)[None],
        ang_b[None],
        prev,
    )[0]


class DeltaMLP(torch.nn.Module):
    def __init__(self, num_in: int, num_out: int, hidden: tuple[int, ...]):
        super().__init__()
        layers: list[torch.nn.Module] = []
        for h in hidden:
            layers += [torch.nn.Linear(num_in, h), torch.nn.ELU()]
            num_in = h
        self.net = torch.nn.Sequential(*layers, torch.nn.Linear(num_in, num_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


@dataclass
class LearnedDelta:
    """π^Δ: features → δ on ``joint_ids`` (PD-target units [rad]); Δa in actions = δ / action_scale."""

    model: torch.nn.Module
    """:class:`DeltaMLP` or :class:`~trainers.delta.per_joint.PerJointLinear` (``cfg.model``)."""
    joint_ids: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    cfg: LearnedDeltaConfig

    def delta_targets(self, target, q, qd, root_quat_w, base_ang_vel_b, previous_target=None) -> np.ndarray:
        """(N, D) δ [rad] for N states (:func:`batched_features` inputs), zero off ``joint_ids``."""
        if self.cfg.previous_target and previous_target is None:
            raise DeltaModelError("this delta model reads the previous PD target; pass previous_target")
        prev = previous_target if self.cfg.previous_target else None
        full = np.zeros(np.shape(target))
        full[:, self.joint_ids] = self.predict(batched_features(target, q, qd, root_quat_w, base_ang_vel_b, prev))
        return full

    def predict(self, x: np.ndarray) -> np.ndarray:
        """(N, J) δ [rad] on ``joint_ids`` from raw features ``x`` (rows of :func:`batched_features`)."""
        with torch.no_grad():
            out = self.model(torch.as_tensor((x - self.mean) / self.std, dtype=torch.float32)).numpy()
        return out.astype(np.float64)

    def delta_target(self, target, q, qd, root_quat_w, root_ang_vel_w, previous_target=None) -> np.ndarray:
        """(D,) δ [rad] for one state, its angular velocity in the world frame."""
        ang_b = quat_to_matrix(root_quat_w).T @ root_ang_vel_w
        prev = None if previous_target is None else np.asarray(previous_target)[None]
        return self.delta_targets(
            np.asarray(target)[None],
            np.asarray(q)[None],
            np.asarray(qd)[None],
            np.asarray(root_quat_w)[None],
            ang_b[None],
            prev,
        )[0]

    def correction(self, robot: PdRobot):
        """A :data:`~trainers.real.stepper.TargetCorrection` reading the base state from ``robot``.

        The previous target is the last one this correction saw (before its first call: the robot's current
        control, i.e. the target a reset put in force)."""
        last: dict[str, np.ndarray] = {}

        def delta(target, q, qd):
            rot = quat_to_matrix(robot.root_quat_w)
            previous = last.get("target", robot.data.ctrl.copy())
            last["target"] = np.array(target, dtype=float)
            return self.delta_target(target, q, qd, robot.root_quat_w, rot @ robot.root_ang_vel_b, previous)

        return delta

    def to_payload(self) -> dict:
        """What :meth:`save` writes (tensors and plain values: ``torch.load(weights_only=True)`` reads it)."""
        return {
            "model": self.model.state_dict(),
            "joint_ids": torch.as_tensor(self.joint_ids),
            "mean": torch.as_tensor(self.mean),
            "std": torch.as_tensor(self.std),
            "joints": self.cfg.joints,
            "hidden": list(self.cfg.hidden),
            "previous_target": self.cfg.previous_target,
            "kind": self.cfg.model,
        }

    def save(self, path: str | Path) -> Path:
        return save_torch(path, self.to_payload())

    @staticmethod
    def from_payload(p: dict) -> LearnedDelta:
        """The model of a :meth:`to_payload` dictionary (raises on anything else)."""
        cfg = LearnedDeltaConfig(
            joints=p["joints"],
            hidden=tuple(p["hidden"]),
            model=p.get("kind", LEGACY_FILE_MODEL),
            previous_target=bool(p.get("previous_target", LEGACY_FILE_PREVIOUS_TARGET)),
        )
        _check_model_kind(cfg.model)
        model: torch.nn.Module
        if cfg.model in PER_JOINT_KINDS:
            model = PerJointLinear(p["model"]["columns"].numpy())
        else:
            model = DeltaMLP(len(p["mean"]), len(p["joint_ids"]), cfg.hidden)
        model.load_state_dict(p["model"])
        return LearnedDelta(model.eval(), p["joint_ids"].numpy(), p["mean"].numpy(), p["std"].numpy(), cfg)

    @staticmethod
    def load(path: str | Path) -> LearnedDelta:
        try:
            return LearnedDelta.from_payload(torch.load(path, weights_only=True))
        except Exception as exc:
            raise DeltaModelError(f"{path}: not a delta model file ({exc})") from exc


def _one_step_residual(robot: PdRobot, traj: Trajectory, t: int, ids: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Nominal next state from frame t with target q*_t + δ (on ``ids``), minus the recorded frame t + 1."""
    reset_to_frame(robot, traj, t)
    target = traj.pd_target[t].copy()
    target[ids] += delta
    robot.step_policy(target)
    ang_w = quat_to_matrix(robot.root_quat_w) @ robot.root_ang_vel_b
    now = state_vector(robot.dof_pos, robot.dof_vel, robot.root_pos_w, robot.root_lin_vel_w, ang_w)
    goal = state_vector(
        traj.dof_pos[t + 1],
        traj.dof_vel[t + 1],
        traj.root_pos_w[t + 1],
        traj.root_lin_vel_w[t + 1],
        traj.root_ang_vel_w[t + 1],
    )
    tilt = quat_to_rotvec(quat_mul(robot.root_quat_w, quat_conj(traj.root_quat_w[t + 1])))
    return np.concatenate([now - goal, tilt])


def transition_labels(trajs: list[Trajectory], cfg: LearnedDeltaConfig) -> tuple[np.ndarray, np.ndarray]:
    """(features (M, F), δ labels (M, J)) for every recorded transition t → t + 1."""
    robot = PdRobot(build_real_model("nominal"))
    ids = joint_ids(cfg.joints, load_robot_spec().joint_names)
    xs, ys = [], []
    for traj in trajs:
        previous = previous_targets(traj) if cfg.previous_target else [None] * traj.num_frames
        for t in range(traj.num_frames - 1):
            xs.append(
                features(
                    traj.pd_target[t],
                    traj.dof_pos[t],
                    traj.dof_vel[t],
                    traj.root_quat_w[t],
                    traj.root_ang_vel_w[t],
                    previous[t],
                )
            )
            ys.append(_label(partial(_one_step_residual, robot, traj, t, ids), ids.size, cfg))
    return np.array(xs), np.array(ys)


def _label(residual: Callable[[np.ndarray], np.ndarray], size: int, cfg: LearnedDeltaConfig) -> np.ndarray:
    """argmin_δ ‖r(δ)‖² + w‖δ‖² with |δ| ≤ max_label_rad, by Levenberg–Marquardt on a finite-difference Jacobian.

    A step is kept only if it lowers the cost (else the damping grows ×10 and the step is retried, up to 4 times):
    plain Gauss–Newton is exact on a smooth, nearly linear response (soft joints, delays) but, where friction or a
    torque limit makes the response kinked, its steps overshoot — 2 undamped steps left the `combined` profile's
    labels *worse* than no label (one-step residual 0.0095 vs 0.0092 without; these settings: 0.0024)."""
    eye, w, h, bound = np.eye(size), cfg.action_norm_weight, cfg.fd_step_rad, cfg.max_label_rad
    delta = np.zeros(size)
    r = residual(delta)
    cost, damping = r @ r, 1e-3
    for _ in range(cfg.label_iters):
        jac = np.stack([(residual(delta + h * e) - r) / h for e in eye], 1)
        hess, grad = jac.T @ jac + w * eye, jac.T @ r + w * delta
        for _ in range(4):
            trial = np.clip(delta - np.linalg.solve(hess + damping * np.diag(np.diag(hess)), grad), -bound, bound)
            r_trial = residual(trial)
            cost_trial = r_trial @ r_trial + w * trial @ trial
            if cost_trial < cost:
                delta, r, cost, damping = trial, r_trial, cost_trial, max(damping / 10, 1e-7)
                break
            damping *= 10
        else:
            break  # no step lowers the cost: a (local) minimum within the bound
    return delta


def fit_learned_delta(trajs: list[Trajectory], cfg: LearnedDeltaConfig | None = None) -> tuple[LearnedDelta, dict]:
    """Labels, then the regression (MLP by Adam, or per-joint ridge in closed form); the model and fit statistics."""
    cfg = LearnedDeltaConfig() if cfg is None else cfg
    _check_model_kind(cfg.model)  # before the labels, which are the slow part
    return fit_on_labels(*transition_labels(trajs, cfg), cfg)


def fit_on_labels(x: np.ndarray, y: np.ndarray, cfg: LearnedDeltaConfig) -> tuple[LearnedDelta, dict]:
    """The regression alone, on features x (M, F) and labels y (M, J) of :func:`transition_labels` (made with the
    same ``joints`` and ``previous_target``): several model kinds can share one set of labels."""
    _check_model_kind(cfg.model)
    mean, std = x.mean(0), x.std(0) + 1e-6
    names = load_robot_spec().joint_names
    ids = joint_ids(cfg.joints, names)
    x_norm = (x - mean) / std
    model: torch.nn.Module
    with reproducible_threads():  # the same weights whatever the caller's torch thread count
        if cfg.model in PER_JOINT_KINDS:
            columns = own_columns(ids, len(names), kind_terms(cfg.model, cfg.previous_target))
            bounds = normalized_bounds(columns, std, len(names)) if cfg.model in BOUNDED_KINDS else None
            model = fit_per_joint_ridge(x_norm, y, columns, cfg.ridge, bounds)
        else:
            model = _fit_mlp(x_norm, y, cfg)
        with torch.no_grad():
            fitted = model(torch.as_tensor(x_norm, dtype=torch.float32)).numpy()
    stats = {
        "transitions": len(x),
        "label_rms_rad": float(np.sqrt((y**2).mean())),
        "fit_rms_rad": float(np.sqrt(((fitted - y) ** 2).mean())),
    }
    return LearnedDelta(model.eval(), ids, mean, std, cfg), stats


def _fit_mlp(x_norm: np.ndarray, y: np.ndarray, cfg: LearnedDeltaConfig) -> DeltaMLP:
    """Full-batch Adam on the MSE of the labels."""
    torch.manual_seed(cfg.seed)
    model = DeltaMLP(x_norm.shape[1], y.shape[1], cfg.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    xt, yt = torch.as_tensor(x_norm, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    for _ in range(cfg.epochs):
        loss = torch.mean((model(xt) - yt) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model
