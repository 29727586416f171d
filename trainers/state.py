"""What reward, termination and observation terms read: one batch of robot and reference state.

Everything is a NumPy array with the environments on axis 0 (N). Points are the tracked
positions (the 24 link origins plus ASAP's 3 extended points: hands and head, P = 27); bodies
are the 24 links whose orientation and angular velocity are tracked (B = 24).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BodyLayout:
    """Names and index groups of the tracked points and bodies (fixed per robot)."""

    point_names: tuple[str, ...]
    """The P tracked points: link names, then ``left_hand``, ``right_hand``, ``head``."""
    body_names: tuple[str, ...]
    """The B links whose orientation / angular velocity is tracked (pelvis + one per joint)."""
    upper_point_ids: np.ndarray
    """Points of the upper body (waist, torso, arms, hands, head)."""
    lower_point_ids: np.ndarray
    """Points of the lower body (pelvis and legs)."""
    feet_point_ids: np.ndarray
    """The two ankle-roll links (feet)."""
    vr_point_ids: np.ndarray
    """ASAP's "VR 3-point": left hand, right hand, head."""
    feet_body_ids: np.ndarray
    """The two ankle-roll links among the bodies."""


@dataclass
class TrackingState:
    """Robot and reference quantities after one policy step (world frame unless noted)."""

    layout: BodyLayout
    point_pos_w: np.ndarray
    """(N, P, 3) [m] robot tracked points."""
    ref_point_pos_w: np.ndarray
    """(N, P, 3) [m] reference tracked points at the current phase."""
    point_lin_vel_w: np.ndarray
    """(N, P, 3) [m/s]."""
    ref_point_lin_vel_w: np.ndarray
    """(N, P, 3) [m/s]."""
    body_quat_w: np.ndarray
    """(N, B, 4) wxyz."""
    ref_body_quat_w: np.ndarray
    """(N, B, 4) wxyz."""
    body_ang_vel_w: np.ndarray
    """(N, B, 3) [rad/s]."""
    ref_body_ang_vel_w: np.ndarray
    """(N, B, 3) [rad/s]."""
    dof_pos: np.ndarray
    """(N, D) [rad]."""
    ref_dof_pos: np.ndarray
    """(N, D) [rad]."""
    dof_vel: np.ndarray
    """(N, D) [rad/s]."""
    ref_dof_vel: np.ndarray
    """(N, D) [rad/s]."""
    action: np.ndarray
    """(N, D) the action just applied (policy units)."""
    last_action: np.ndarray
    """(N, D) the action of the step before."""
    actuator_force: np.ndarray
    """(N, D) [N·m] joint torques of the last physics substep (after clipping)."""
    dof_lower_rad: np.ndarray
    """(D,) [rad] joint position limits."""
    dof_upper_rad: np.ndarray
    """(D,) [rad]."""
    dof_vel_limit_rad_s: np.ndarray
    """(D,) [rad/s]."""
    effort_limit_nm: np.ndarray
    """(D,) [N·m]."""
    terminated: np.ndarray
    """(N,) bool: the episode ended by failure this step (not by running out of motion)."""
    foot_contact_height_m: float = 0.06
    """A foot whose link origin is lower than this is taken as in contact with the floor [m]."""
