"""How much damping a per-joint Δa can ask for before its velocity term destabilizes the joint it acts on.

A per-joint Δa's damping term δ_j = b_j·0.05·q̇_j is read once per policy step (20 ms) from the velocity at the
step's start and held for the step's physics steps: a velocity feedback sampled at 50 Hz, which no b ≤ 0 makes
unstable in continuous time but a large enough |b| does when sampled. For each joint of the nominal G1 hanging
from a gantry (fixed base, ASAP's default pose, settled), this bench kicks that joint alone (``--kick-rad-s``),
runs ``--steps`` policy steps with δ_j = b·0.05·q̇_j on it, and finds by bisection the b at which the kick stops
dying out (the last ``--window`` steps' peak |q̇_j| reaches the kick): ``b_crit`` as Δa applies it (once per
policy step) and, as the reference, applied at every 5 ms physics step. With ``--delta DELTA.pt`` (a per-joint
Δa with a damping term, e.g. ``per_joint_physical``) it also prints each joint's fitted b and b / b_crit.

    python bench/delta_sampled_damping.py --delta OUT/combined/delta_per_joint_physical.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainers.delta.learned import LearnedDelta
from trainers.delta.per_joint import column_terms
from trainers.real.model import build_real_model
from trainers.real.stepper import PdRobot
from trainers.sim_model import default_joint_pos

VELOCITY_FEATURE_SCALE = 0.05
"""The Δa features carry 0.05·q̇ (:func:`trainers.delta.learned.batched_features`)."""
B_SEARCH_LOW = -20.0
"""Most negative b searched; a joint still stable there is reported as < this."""


def settled_state(robot: PdRobot, pose: np.ndarray, steps: int = 100) -> tuple[np.ndarray, np.ndarray]:
    robot.reset(pose)
    for _ in range(steps):
        robot.step_policy(pose)
    return robot.data.qpos.copy(), robot.data.qvel.copy()


def kick_growth(
    robot: PdRobot,
    state: tuple[np.ndarray, np.ndarray],
    pose: np.ndarray,
    joint: int,
    b: float,
    every_physics_step: bool,
    kick_rad_s: float,
    steps: int,
    window: int,
) -> float:
    """Peak |q̇_joint| over the last ``window`` of ``steps`` policy steps after the kick, over the kick."""
    robot.reset(pose)
    robot.data.qpos[:], robot.data.qvel[:] = state
    robot.data.qvel[robot.qvel_adr[joint]] += kick_rad_s

    def correction(targets, q, qd):
        delta = np.zeros_like(targets)
        delta[joint] = b * VELOCITY_FEATURE_SCALE * qd[joint]
        return delta

    peaks = []
    for _ in range(steps):
        robot.step_policy(pose, correction, every_physics_step=every_physics_step)
        peaks.append(abs(robot.dof_vel[joint]))
        if not np.isfinite(peaks[-1]) or peaks[-1] > 1e3:
            return np.inf
    return max(peaks[-window:]) / kick_rad_s


def critical_b(robot, state, pose, joint, every_physics_step, kick_rad_s, steps, window, tol=1e-3) -> float:
    """The b ≤ 0 where the kick stops dying out (bisection; −inf when stable down to :data:`B_SEARCH_LOW`)."""

    def unstable(b: float) -> bool:
        return kick_growth(robot, state, pose, joint, b, every_physics_step, kick_rad_s, steps, window) >= 1.0

    if not unstable(B_SEARCH_LOW):
        return -np.inf
    stable, bad = 0.0, B_SEARCH_LOW
    while stable - bad > tol:
        mid = 0.5 * (stable + bad)
        stable, bad = (stable, mid) if unstable(mid) else (mid, bad)
    return bad


def fitted_damping(path: str, num_dof: int) -> dict[int, float]:
    """Raw damping coefficient b_j of each output joint of a per-joint Δa file."""
    delta = LearnedDelta.load(path)
    cols = delta.model.columns.numpy()
    terms = column_terms(cols, num_dof)
    if "damping" not in terms:
        raise SystemExit(f"{path}: this Δa ({delta.cfg.model}) has no damping term")
    k = terms.index("damping")
    raw = delta.model.weight.detach().numpy()[:, k] / delta.std[cols[:, k]]
    return {int(j): float(b) for j, b in zip(delta.joint_ids, raw)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delta", help="a per-joint Δa file with a damping term: print its b / b_crit")
    ap.add_argument("--kick-rad-s", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=50, help="policy steps after the kick")
    ap.add_argument("--window", type=int, default=10, help="last steps whose peak is compared with the kick")
    args = ap.parse_args(argv)
    robot = PdRobot(build_real_model("nominal", fixed_base=True))
    pose = default_joint_pos(robot.robot)
    state = settled_state(robot, pose)
    names = robot.robot.joint_names
    kp = robot.model.actuator_gainprm[:, 0]
    fitted = fitted_damping(args.delta, len(names)) if args.delta else {}
    header = f"{'joint':28s} {'Kp':>6s} {'b_crit 50 Hz':>13s} {'b_crit 200 Hz':>14s} {'ratio':>6s}"
    print(header + (f" {'fitted b':>9s} {'b/b_crit':>9s}" if fitted else ""))
    rows = []
    for j, name in enumerate(names):
        sampled = critical_b(robot, state, pose, j, False, args.kick_rad_s, args.steps, args.window)
        every = critical_b(robot, state, pose, j, True, args.kick_rad_s, args.steps, args.window)
        rows.append((sampled, every))
        line = f"{name:28s} {kp[j]:6.0f} {sampled:13.3f} {every:14.3f} {every / sampled:6.2f}"
        if j in fitted:
            line += f" {fitted[j]:9.3f} {fitted[j] / sampled:9.2f}"
        print(line)
    sampled_all, every_all = np.array(rows).T
    finite = np.isfinite(every_all)
    print(
        f"median b_crit: {np.median(sampled_all):.3f} applied once per policy step, "
        f"{np.median(every_all[finite]) if finite.any() else -np.inf:.3f} at every physics step "
        f"(ratio {np.median(every_all[finite] / sampled_all[finite]) if finite.any() else np.inf:.2f}; "
        f"{int((~finite).sum())} joints stable down to b = {B_SEARCH_LOW} at every physics step)"
    )
    if fitted:
        ratios = np.array([fitted[j] / sampled_all[j] for j in fitted])
        print(f"fitted b / b_crit (once per policy step): median {np.median(ratios):.2f}, max {ratios.max():.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
