"""Layer 1 on the robot result: the retargeted G1 motion and its MuJoCo configurations.

The robot is re-grounded first, like the human: the floor is the densest height of its
lowest collision point. (The retargeter grounds each clip on its single lowest frame, so a
clip whose feet sink in one segment comes out floating everywhere else; re-grounding on
the densest height puts the floor back under the stance feet and leaves the sinking to the
penetration check.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.filter import motion_checks as mc
from retarget.filter.config import KinematicConfig
from retarget.filter.robot_geometry import RobotGeometry, compute_robot_geometry
from retarget.filter.verdict import CheckResult, Repair
from retarget.rotations import quat_to_matrix
from robots.registry import RobotSpec


@dataclass(frozen=True)
class RobotKinematics:
    checks: tuple[CheckResult, ...]
    repair: Repair | None
    qpos: np.ndarray
    """(T, nq) configurations after re-grounding (what layers 2 and 3 use)."""
    geometry: RobotGeometry
    """Geometry after re-grounding."""
    joint_speed_rad_s: np.ndarray
    """(T, D) joint speeds by central differences [rad/s]."""


def check_joint_speed(speed: np.ndarray, robot: RobotSpec, cfg: KinematicConfig) -> CheckResult:
    limit = robot.velocity_limit_rad_s * cfg.joint_speed_factor
    ratio = np.abs(speed) / limit
    bad = (ratio > 1.0).any(axis=1)
    t, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.size else (0, 0)
    worst = float(ratio.max()) if ratio.size else 0.0
    reason = (
        f"{robot.joint_names[j]} turns at {abs(speed[t, j]):.1f} rad/s, {worst:.2f}× its "
        f"{robot.velocity_limit_rad_s[j]:g} rad/s limit (frame {t}); {bad.sum()} frames over a limit"
    )
    return mc._result(
        "robot.joint_speed", bad, worst, cfg.joint_speed_factor, "× limit", reason, joint=robot.joint_names[j]
    )


def check_self_collision(geometry: RobotGeometry, cfg: KinematicConfig) -> CheckResult:
    depth = geometry.self_depth_m
    bad = depth > cfg.self_collision_m
    t = int(np.argmax(depth)) if len(depth) else 0
    pair = geometry.self_pair[t] if len(depth) else ""
    return mc._result(
        "robot.self_collision",
        bad,
        depth.max(initial=0.0),
        cfg.self_collision_m,
        "m",
        f"{pair} interpenetrate by {100 * depth.max(initial=0.0):.1f} cm at frame {t}; "
        f"{bad.sum()} frames deeper than {100 * cfg.self_collision_m:.0f} cm",
        pair=pair,
    )


def check_robot(
    qpos: np.ndarray, dof_qpos_idx: np.ndarray, fps: float, robot: RobotSpec, cfg: KinematicConfig = KinematicConfig()
) -> RobotKinematics:
    """All layer-1 checks on (T, nq) MuJoCo configurations at `fps`."""
    finite = mc.check_finite("robot.finite", qpos)
    qpos = np.nan_to_num(qpos)
    # Normalise root quaternions (an all-zero one from a NaN frame becomes identity).
    quat = qpos[:, 3:7].copy()
    norm = np.linalg.norm(quat, axis=1, keepdims=True)
    quat = np.where(norm > 1e-9, quat / np.maximum(norm, 1e-12), np.array([1.0, 0, 0, 0]))
    qpos = qpos.copy()
    qpos[:, 3:7] = quat
    geometry = compute_robot_geometry(qpos, robot)
    offset = mc.floor_offset_m(geometry.lowest_m, cfg.floor_window_m)
    repair = None
    if abs(offset) > cfg.reground_tolerance_m:
        repair = Repair(
            "robot.reground",
            -offset,
            f"the robot motion stands {100 * offset:+.1f} cm off the floor; moved by {-100 * offset:+.1f} cm",
        )
        qpos[:, 2] -= offset
        geometry = geometry.shifted(-offset)
    dof = qpos[:, dof_qpos_idx]
    speed = np.gradient(dof, 1.0 / fps, axis=0) if len(dof) > 1 else np.zeros_like(dof)
    root = qpos[:, 0:3]
    sole = geometry.sole_w
    checks = (
        finite,
        mc.check_frozen("robot.frozen", qpos, fps, cfg),
        mc.check_root_teleport("robot.root_teleport", root, fps, cfg),
        mc.check_jitter("robot.jitter", geometry.body_pos_w, cfg),
        mc.check_root_spike("robot.root_spike", root, quat_to_matrix(quat), fps, cfg),
        mc.check_penetration("robot.penetration", geometry.lowest_m, cfg),
        mc.check_floating("robot.floating", geometry.lowest_m, root[:, 2], fps, cfg),
        mc.check_sliding("robot.sliding", sole[..., 2], mc.horizontal_speed(sole, fps), fps, cfg),
        check_joint_speed(speed, robot, cfg),
        check_self_collision(geometry, cfg),
    )
    return RobotKinematics(checks, repair, qpos, geometry, speed)
