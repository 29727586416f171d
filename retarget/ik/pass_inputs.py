"""What a compiled Gauss-Newton pass of the whole-sequence IK reads: the kinematic tree, the residual layout,
the per-frame targets, the one-sided rows' state and the step settings, as named tuples of arrays and scalars.

Kept apart from the compiled modules (and free of numba) so that the solver can hand them to an
ahead-of-time compiled pass (:mod:`retarget.ik.aot`) without importing numba.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class TreeArrays(NamedTuple):
    """The kinematic tree as the kernel reads it (see :class:`retarget.tree_kinematics.TreeKinematics`)."""

    parent: np.ndarray
    """(D,) parent joint of each joint, −1 for the root; parents come before children."""
    placement_rot: np.ndarray
    """(D, 3, 3) joint frame in its parent's frame at zero angle."""
    placement_pos: np.ndarray
    """(D, 3) [m] joint origin in its parent's frame."""
    axis_j: np.ndarray
    """(D, 3) joint axis in its own frame."""
    point_joint: np.ndarray
    """(N,) joint each tracked point rides on (−1: the root)."""
    point_pos_j: np.ndarray
    """(N, 3) [m] tracked point in its joint's frame."""
    point_rot_j: np.ndarray
    """(N, 3, 3) tracked frame orientation in its joint's frame."""
    ancestors: np.ndarray
    """(N, A) ancestor joints of each tracked point, padded."""
    ancestor_count: np.ndarray
    """(N,) number of valid entries in each row of ``ancestors``."""


class ResidualLayout(NamedTuple):
    """Which tracked points play which role: [P targets | S soles | Q spheres | F frames]."""

    num_points: int
    num_soles: int
    num_spheres: int
    num_frames: int
    segment_a: np.ndarray
    """(G,) start point of each limb segment."""
    segment_b: np.ndarray
    """(G,) end point of each limb segment."""
    sphere_radius_m: np.ndarray
    """(Q,) [m] collision sphere radii (kept above the floor)."""
    pair_a: np.ndarray
    """(K,) arm sphere of each collision pair (index among the spheres)."""
    pair_b: np.ndarray
    """(K,) body sphere of each collision pair."""
    pair_clearance_m: np.ndarray
    """(K,) [m] smallest allowed distance between the two centres."""


class FrameTargets(NamedTuple):
    """Per-frame targets and residual scales (:class:`retarget.ik.sequence.SequenceTargets`, as arrays)."""

    point_pos_w: np.ndarray
    point_weight: np.ndarray
    segment_vec_w: np.ndarray
    segment_weight: np.ndarray
    frame_rot_w: np.ndarray
    frame_weight: np.ndarray
    """(T, F, 3) per component of the world-frame rotation error (x, y: tilt; z: heading)."""
    sole_floor_check: np.ndarray


class OneSided(NamedTuple):
    """The one-sided (floor, collision) residuals: scales, which rows are switched on, and their
    augmented-Lagrangian shifts."""

    floor_margin_m: float
    """Height swing soles keep above the floor [m]."""
    floor_weight: float
    collision_weight: float
    sticky: bool
    """Once true, a row switched on stays on (the solver's last iterations, so they cannot oscillate)."""
    augmented: bool
    """Update each switched-on row's shift by its remaining violation (augmented Lagrangian)."""
    floor_on: np.ndarray
    """(T, S) bool, updated in place."""
    sphere_on: np.ndarray
    """(T, Q) bool, updated in place."""
    pair_on: np.ndarray
    """(T, K) bool, updated in place."""
    floor_shift_m: np.ndarray
    """(T, S) [m] ≥ 0, updated in place: how far beyond the constraint each row aims."""
    sphere_shift_m: np.ndarray
    """(T, Q) [m], as ``floor_shift_m``."""
    pair_shift_m: np.ndarray
    """(T, K) [m], as ``floor_shift_m``."""


class StepSettings(NamedTuple):
    """What one pass of Gauss-Newton iterations needs besides the problem (see
    :class:`retarget.ik.sequence.SequenceIkConfig` for the meaning of each)."""

    damping: float
    """Levenberg-Marquardt damping on the diagonal."""
    acceleration_penalty: float
    """Weight of Σ |second difference|² of the smoothed coordinates in the normal equations, (scale·fps²)²;
    0 switches smoothing off."""
    pin_limits: bool
    """Pin joints that would cross a limit (else only clip them)."""
    max_step: float
    """Largest change of any coordinate of a frame in one iteration [rad or m]."""
    step_tolerance: float
    """Stop when no coordinate moves more than this [rad or m] (and no one-sided row is violated)."""
    constraint_tolerance_m: float
    """One-sided (floor, collision) violations up to this are accepted [m]."""
    augmented_lagrangian: bool
    """Update the one-sided rows' shifts in the constraint iterations."""
