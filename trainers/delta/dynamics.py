"""The DeltaDynamics baseline: a learned residual of the state, s_{t+1} = f_sim(s_t, a_t) + Δs(s_t, a_t).

Where ASAP corrects the *action* the simulator receives, this baseline corrects the *state* it
produces (the paper's "delta dynamics" comparison). Labels come from the one-step replay of the
recorded transitions (:mod:`trainers.delta.one_step`): the recorded next state minus the nominal
simulator's prediction from the same state and target. An MLP maps the features π^Δ uses
(:func:`trainers.delta.learned.batched_features`) to Δs = [Δq (D) rad, Δq̇ (D) rad/s,
Δv_root (3) m/s, Δω_root (3) rad/s, world frame], fitted with MSE on per-output standardized labels.
Root position and orientation are not corrected directly: they follow from the corrected velocities.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from retarget.rotations import quat_to_matrix
from trainers.delta.collection import Trajectory
from trainers.delta.learned import DeltaMLP, DeltaModelError, batched_features
from trainers.delta.one_step import predict_next, previous_targets, recorded_next, transitions
from trainers.real.model import build_real_model
from trainers.reproducible import reproducible_threads, save_torch


@dataclass(frozen=True)
class DeltaDynamicsConfig:
    """How Δs is fitted."""

    hidden: tuple[int, ...] = (128, 128)
    """MLP hidden layers (ELU)."""
    epochs: int = 1500
    """Full-batch Adam steps."""
    lr: float = 3e-3
    """Adam learning rate."""
    seed: int = 0
    """Torch seed."""
    previous_target: bool = True
    """Also feed q*_{t−1} − q*_t (as ASAP's Δa gets it): what a delayed robot still executes is not in the state."""


@dataclass
class DeltaDynamics:
    """Δs(s, q*) for a batch of states; see the module docstring for the output layout."""

    model: DeltaMLP
    x_mean: np.ndarray
    x_std: np.ndarray
    y_std: np.ndarray
    """Per-output scale the network's outputs are multiplied by (labels were divided by it)."""
    hidden: tuple[int, ...]
    previous_target: bool = False
    """Whether the features include q*_{t−1} − q*_t (then callers pass ``previous_target``)."""

    @property
    def num_dof(self) -> int:
        return (len(self.y_std) - 6) // 2

    def __call__(self, target, q, qd, root_quat_w, base_ang_vel_b, previous_target=None) -> np.ndarray:
        """(N, 2D + 6) Δs for N states (base angular velocity in the pelvis frame, as MuJoCo's free joint)."""
        if self.previous_target and previous_target is None:
            raise DeltaModelError("this delta-dynamics model reads the previous PD target; pass previous_target")
        prev = previous_target if self.previous_target else None
        x = (batched_features(target, q, qd, root_quat_w, base_ang_vel_b, prev) - self.x_mean) / self.x_std
        with torch.no_grad():
            out = self.model(torch.as_tensor(x, dtype=torch.float32)).numpy().astype(np.float64)
        return out * self.y_std

    def save(self, path: str | Path) -> Path:
        payload = {
            "kind": "delta_dynamics",
            "model": self.model.state_dict(),
            "x_mean": torch.as_tensor(self.x_mean),
            "x_std": torch.as_tensor(self.x_std),
            "y_std": torch.as_tensor(self.y_std),
            "hidden": list(self.hidden),
            "previous_target": self.previous_target,
        }
        return save_torch(path, payload)

    @staticmethod
    def load(path: str | Path) -> DeltaDynamics:
        try:
            p = torch.load(path, weights_only=True)
            if p.get("kind") != "delta_dynamics":
                raise ValueError("it holds no delta-dynamics model")
            model = DeltaMLP(len(p["x_mean"]), len(p["y_std"]), tuple(p["hidden"]))
            model.load_state_dict(p["model"])
        except Exception as exc:
            raise DeltaModelError(f"{path}: not a delta-dynamics model file ({exc})") from exc
        return DeltaDynamics(
            model.eval(),
            p["x_mean"].numpy(),
            p["x_std"].numpy(),
            p["y_std"].numpy(),
            tuple(p["hidden"]),
            bool(p.get("previous_target", False)),
        )


def dynamics_labels(trajs: list[Trajectory], previous_target: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(features (M, F), Δs labels (M, 2D + 6)) of every recorded transition."""
    pairs = transitions(trajs)
    pred, goal = predict_next(build_real_model("nominal"), pairs), recorded_next(pairs)
    prev = {id(tr): previous_targets(tr) for tr in trajs}
    x = np.array(
        [
            batched_features(
                tr.pd_target[t][None],
                tr.dof_pos[t][None],
                tr.dof_vel[t][None],
                tr.root_quat_w[t][None],
                (quat_to_matrix(tr.root_quat_w[t]).T @ tr.root_ang_vel_w[t])[None],
                prev[id(tr)][t][None] if previous_target else None,
            )[0]
            for tr, t in pairs
        ]
    )
    y = np.concatenate(
        [
            goal.dof_pos - pred.dof_pos,
            goal.dof_vel - pred.dof_vel,
            goal.root_lin_vel_w - pred.root_lin_vel_w,
            goal.root_ang_vel_w - pred.root_ang_vel_w,
        ],
        1,
    )
    return x, y


def fit_delta_dynamics(trajs: list[Trajectory], cfg: DeltaDynamicsConfig | None = None) -> tuple[DeltaDynamics, dict]:
    """Labels from the one-step replay, then the MLP regression; returns the model and fit statistics."""
    cfg = DeltaDynamicsConfig() if cfg is None else cfg
    x, y = dynamics_labels(trajs, cfg.previous_target)
    if len(x) == 0:
        raise DeltaModelError("delta dynamics needs at least one recorded transition")
    x_mean, x_std, y_std = x.mean(0), x.std(0) + 1e-6, y.std(0) + 1e-9
    xt = torch.as_tensor((x - x_mean) / x_std, dtype=torch.float32)
    yt = torch.as_tensor(y / y_std, dtype=torch.float32)
    with reproducible_threads():  # the same weights whatever the caller's torch thread count
        torch.manual_seed(cfg.seed)
        model = DeltaMLP(x.shape[1], y.shape[1], cfg.hidden)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        for _ in range(cfg.epochs):
            loss = torch.mean((model(xt) - yt) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            fit = model(xt).numpy() * y_std
    dyn = DeltaDynamics(model, x_mean, x_std, y_std, cfg.hidden, cfg.previous_target)
    d = dyn.num_dof
    stats = {
        "transitions": len(x),
        "label_rms_dof_pos_rad": float(np.sqrt((y[:, :d] ** 2).mean())),
        "fit_residual_rms_dof_pos_rad": float(np.sqrt(((fit - y)[:, :d] ** 2).mean())),
        "explained_variance": float(1.0 - ((fit - y) / y_std).var() / (y / y_std).var()),
    }
    return dyn, stats
