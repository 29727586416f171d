"""An ensemble of learned Δa fits, each on a bootstrap resample of the rollouts (whole rollouts drawn with
replacement).

One fit of Δa on a handful of rollouts is one answer among the many the data allow: where the rollouts say little
(phases the pre-trained policy rarely reached, states it never visited) the fit's coefficients are set by which
rollouts happened to be collected, and fine-tuning against a single fit is chaotic in those coefficients (a 0.1 %
change of the fit has moved a seed from 8/8 to 0/8 in the robot). Fine-tuning against the ensemble — environment
``i`` steps with member ``i mod K`` for the whole run, so every PPO batch holds every member — asks the policy to
work under each plausible fit, not to exploit one fit's error. The members' disagreement on the fitting
transitions is reported as the fit's uncertainty.

The labels (the slow part: one Levenberg–Marquardt solve per transition) are computed once; each member is the
closed-form (or MLP) regression on its resample's labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from trainers.delta.collection import Trajectory
from trainers.delta.learned import (
    DeltaModelError,
    LearnedDelta,
    LearnedDeltaConfig,
    fit_on_labels,
    transition_labels,
)
from trainers.reproducible import save_torch

DEFAULT_ENSEMBLE_MEMBERS = 5
"""Members of a Δa ensemble (``bench_table4.py`` method ASAP-E)."""


@dataclass
class DeltaEnsemble:
    """K learned Δa models; :meth:`delta_targets` gives row ``i`` of a batch member ``i mod K``'s δ."""

    members: list[LearnedDelta]

    def member_of_rows(self, num_rows: int) -> np.ndarray:
        """(N,) which member acts on each environment of a batch of ``num_rows``."""
        return np.arange(num_rows) % len(self.members)

    def delta_targets(self, target, q, qd, root_quat_w, base_ang_vel_b, previous_target=None) -> np.ndarray:
        """(N, D) δ [rad], row ``i`` from member ``i mod K`` (:meth:`LearnedDelta.delta_targets` arguments)."""
        out = np.zeros(np.shape(target))
        member = self.member_of_rows(len(target))
        for k, model in enumerate(self.members):
            rows = member == k
            if rows.any():
                prev = None if previous_target is None else previous_target[rows]
                out[rows] = model.delta_targets(
                    target[rows], q[rows], qd[rows], root_quat_w[rows], base_ang_vel_b[rows], prev
                )
        return out

    def save(self, path: str | Path) -> Path:
        return save_torch(path, {"members": [m.to_payload() for m in self.members]})


def load_delta_file(path: str | Path) -> LearnedDelta | DeltaEnsemble:
    """A ``delta.pt`` written by :meth:`LearnedDelta.save` or :meth:`DeltaEnsemble.save`."""
    try:
        payload = torch.load(path, weights_only=True)
        if isinstance(payload, dict) and "members" in payload:
            members = [LearnedDelta.from_payload(p) for p in payload["members"]]
            if not members:
                raise ValueError("an ensemble without members")
            return DeltaEnsemble(members)
        return LearnedDelta.from_payload(payload)
    except Exception as exc:
        raise DeltaModelError(f"{path}: not a delta model file ({exc})") from exc


def bootstrap_rollouts(num_rollouts: int, members: int, seed: int) -> list[np.ndarray]:
    """Per member, the rollout indices of its resample (``num_rollouts`` drawn with replacement)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, num_rollouts, num_rollouts) for _ in range(members)]


def fit_delta_ensemble(
    trajs: list[Trajectory],
    cfg: LearnedDeltaConfig,
    members: int = DEFAULT_ENSEMBLE_MEMBERS,
    seed: int = 0,
    labels: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[DeltaEnsemble, dict]:
    """The labels of every transition once (or ``labels``, :func:`transition_labels` of ``trajs`` with ``cfg``,
    already computed), then one regression per bootstrap resample of the rollouts; the ensemble and its statistics
    (resamples, each member's fit, the members' disagreement on all transitions)."""
    if members < 1:
        raise DeltaModelError(f"an ensemble needs at least one member, not {members}")
    x, y = transition_labels(trajs, cfg) if labels is None else labels
    counts = [t.num_frames - 1 for t in trajs]  # a rollout's last frame has no transition
    if len(x) != sum(counts):
        raise DeltaModelError(f"{len(x)} labels for {len(trajs)} rollouts of {sum(counts)} transitions")
    rows_of = np.split(np.arange(len(x)), np.cumsum(counts)[:-1])
    resamples = bootstrap_rollouts(len(trajs), members, seed)
    fitted, fit_stats = [], []
    for picks in resamples:
        rows = np.concatenate([rows_of[i] for i in picks])
        model, stats = fit_on_labels(x[rows], y[rows], cfg)
        fitted.append(model)
        fit_stats.append(stats)
    ensemble = DeltaEnsemble(fitted)
    stats = {
        "members": members,
        "resamples": [p.tolist() for p in resamples],
        "member_fits": fit_stats,
        "transitions": len(x),
        "label_rms_rad": float(np.sqrt((y**2).mean())),
        "disagreement_rms_rad": disagreement_rms(ensemble, x),
    }
    return ensemble, stats


def disagreement_rms(ensemble: DeltaEnsemble, x: np.ndarray) -> float:
    """RMS over transitions and joints of the members' standard deviation of δ [rad] on features ``x``
    (rows of :func:`~trainers.delta.learned.batched_features`): 0 when every member agrees."""
    preds = np.stack([model.predict(x) for model in ensemble.members])
    return float(np.sqrt(preds.var(axis=0).mean()))
