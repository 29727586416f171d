"""A physically structured π^Δ: per joint, δ_j is linear in that joint's own PD terms.

The mismatches a "real" G1 profile holds act joint by joint, and each has a closed form in the
nominal PD's target units (Kp, Kd nominal):

* a stiffness ratio r:        δ_j = (r − 1)·(q*_j − q_j)                      (exact, see ``analytic.py``)
* extra damping ΔKd:          δ_j = −(ΔKd / Kp)·q̇_j                           (exact)
* an actuation delay of k of the policy step's n physics steps: the joint still executes q*_{t−1}
  for k steps, δ_j ≈ (k / n)·(q*_{t−1,j} − q*_{t,j})                         (first order)

so δ_j = w_j·[q*_j − q_j, q̇_j, q*_{t−1,j} − q*_{t,j}] + b_j spans them all with 4 numbers per joint.

The ``per_joint_physical`` kind holds each coefficient to what such an actuator can be (:data:`TERM_BOUNDS`):
a stiffness ratio r = 1 + a in [0, 2], added damping only (b ≤ 0), a delay of 0 to 1 policy step (c in [0, 1]).
An unbounded fit on the smooth targets of a deterministic policy's rollouts can land outside them — anti-damping
(b > 0) or an anticipating "negative delay" (c < 0) — where the fit data barely constrain it; PPO's exploration
noise then moves the targets far more per step than the rollouts did, and those coefficients feed energy into the
joints (docs/table4.md, "The side jump").
The ``per_joint_undamped`` kind is the bounded one without the damping term. Δa is applied once per 20 ms policy
step from the velocity at the step's start, so its damping term is a velocity feedback sampled at 50 Hz, not the
continuous damping it stands for: held for a whole step it over-corrects a fast joint, and under PPO's exploration
noise on a fast motion it drives the joints into their velocity limits in the Δa simulator while the robot it was
fitted to gives no such penalty (docs/table4.md, "The kick with the bounded Δa"). Without it a robot's extra
damping is left to the stiffness and bias terms; the term explained ≈ 1 % of the fit residual, and dropping it is
the default since it lifted the held-out kick in `combined` and lost nothing outside the intervals elsewhere
(docs/table4.md, "The Δa without its damping term").
The MLP π^Δ sees 75 inputs per output and, fitted on a few hundred transitions of one clip, learns
that clip's poses rather than the actuators (one-step error on another clip's rollouts 10× the
uncorrected simulator's, README); this model cannot, because its inputs carry no pose.

It reads the same feature vector as the MLP (:func:`trainers.delta.learned.batched_features`,
normalized), picks each output joint's own columns, and is fitted in closed form (ridge least squares
per joint) on the same Levenberg–Marquardt labels.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.delta.defaults import PER_JOINT_TERMS, TERMS

TERM_BOUNDS: dict[str, tuple[float, float]] = {"stiffness": (-1.0, 1.0), "damping": (-np.inf, 0.0), "delay": (0.0, 1.0)}
"""Bounds of each term's raw-feature coefficient in the bounded kinds (:data:`~trainers.delta.defaults.BOUNDED_KINDS`):
a stiffness ratio 1 + a in [0, 2], added damping only (b ≤ 0), a delay of 0 to 1 policy step."""


def kind_terms(kind: str, previous_target: bool) -> tuple[str, ...]:
    """The terms a per-joint ``kind`` fits, given whether the features hold the previous target."""
    return tuple(t for t in PER_JOINT_TERMS[kind] if previous_target or t != "delay")


def own_columns(joint_ids: np.ndarray, num_dof: int, terms: tuple[str, ...] = TERMS) -> np.ndarray:
    """(J, C) feature columns of each output joint, one per term in ``terms`` (in :data:`TERMS` order), in the
    layout of :func:`trainers.delta.learned.batched_features` ([q* − q (D), 0.05·q̇ (D), ω_b (3), g_b (3), prev (D)])."""
    unknown = set(terms) - set(TERMS)
    if unknown:
        raise ValueError(f"unknown per-joint terms {sorted(unknown)}; valid: {', '.join(TERMS)}")
    offset = {"stiffness": 0, "damping": num_dof, "delay": 2 * num_dof + 6}
    return np.stack([offset[t] + joint_ids for t in TERMS if t in terms], axis=1)


def column_terms(columns: np.ndarray, num_dof: int) -> tuple[str, ...]:
    """The term of each column position of a per-joint model's ``columns`` (the inverse of :func:`own_columns`)."""
    first = np.asarray(columns)[0]
    return tuple("stiffness" if c < num_dof else "damping" if c < 2 * num_dof else "delay" for c in first)


class PerJointLinear(torch.nn.Module):
    """δ_k = Σ_c W[k, c]·x[:, cols[k, c]] + b[k] for output joint k (x: normalized features)."""

    columns: torch.Tensor
    """(J, C) registered buffer: feature columns of each output joint (declared for type checkers)."""

    def __init__(self, columns: np.ndarray):
        super().__init__()
        self.register_buffer("columns", torch.as_tensor(np.asarray(columns), dtype=torch.long))
        self.weight = torch.nn.Parameter(torch.zeros(self.columns.shape, dtype=torch.float32))
        self.bias = torch.nn.Parameter(torch.zeros(self.columns.shape[0], dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x[:, self.columns] * self.weight).sum(-1) + self.bias


def fit_per_joint_ridge(
    x_norm: np.ndarray,
    y: np.ndarray,
    columns: np.ndarray,
    ridge: float,
    bounds: np.ndarray | None = None,
) -> PerJointLinear:
    """Per-joint ridge regression of labels y (M, J) on normalized features (M, F).

    ``ridge`` weighs ‖w‖² against the sum of squared label errors; the bias is not penalized. ``bounds`` (C, 2):
    box constraints on each joint's C weights in normalized units (None: unbounded, solved in closed form; else
    bounded-variable least squares on the same objective)."""
    from scipy.optimize import lsq_linear

    model = PerJointLinear(columns)
    weight, bias = np.zeros(columns.shape), np.zeros(columns.shape[0])
    num_coef = columns.shape[1]
    for k in range(columns.shape[0]):
        a = np.concatenate([x_norm[:, columns[k]], np.ones((len(x_norm), 1))], axis=1)
        if bounds is None:
            penalty = np.diag(np.r_[np.full(num_coef, ridge), 0.0])
            sol = np.linalg.solve(a.T @ a + penalty, a.T @ y[:, k])
        else:
            # The ridge as extra rows: ‖a·w − y‖² + ridge·‖w_coef‖² = ‖[a; √ridge·I 0]·w − [y; 0]‖².
            rows = np.concatenate([a, np.c_[np.sqrt(ridge) * np.eye(num_coef), np.zeros(num_coef)]])
            rhs = np.r_[y[:, k], np.zeros(num_coef)]
            lower, upper = np.r_[bounds[k, :, 0], -np.inf], np.r_[bounds[k, :, 1], np.inf]
            sol = lsq_linear(rows, rhs, bounds=(lower, upper), method="bvls").x
        weight[k], bias[k] = sol[:-1], sol[-1]
    with torch.no_grad():
        model.weight.copy_(torch.as_tensor(weight))
        model.bias.copy_(torch.as_tensor(bias))
    return model


def normalized_bounds(columns: np.ndarray, std: np.ndarray, num_dof: int) -> np.ndarray:
    """(J, C, 2) bounds on the normalized weights equivalent to :data:`TERM_BOUNDS` on the raw features'
    coefficients (a raw coefficient is the normalized weight / the feature's std > 0, so the box scales by it)."""
    box = np.asarray([TERM_BOUNDS[t] for t in column_terms(columns, num_dof)])
    return box[None, :, :] * std[columns][:, :, None]
