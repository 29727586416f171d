"""Build the pinocchio model of a robot (free-flyer root) from the same URDF as MuJoCo.

pinocchio's free-flyer configuration is ``[x, y, z, qx, qy, qz, qw, joints...]`` (xyzw);
:func:`mujoco_qpos_to_pinocchio` converts from MuJoCo's ``[x, y, z, qw, qx, qy, qz, ...]``.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pinocchio as pin

from robots.registry import RobotSpec, load_robot_spec


@cache
def _built(robot_name: str) -> pin.Model:
    robot = load_robot_spec(robot_name)
    model = pin.buildModelFromUrdf(str(robot.urdf_path), pin.JointModelFreeFlyer())
    return model


def build_pinocchio_model(robot: RobotSpec | str = "g1_23dof") -> pin.Model:
    """pinocchio model with a free-flyer root (cached per process; copy before editing)."""
    name = robot if isinstance(robot, str) else robot.name
    model = _built(name)
    pin_order = [model.names[i] for i in range(2, model.njoints)]
    spec_order = list(load_robot_spec(name).joint_names)
    if pin_order != spec_order:
        raise RuntimeError(f"pinocchio joint order {pin_order} differs from the URDF order {spec_order}")
    return model


def mujoco_qpos_to_pinocchio(qpos: np.ndarray) -> np.ndarray:
    """Reorder the root quaternion from MuJoCo's wxyz to pinocchio's xyzw."""
    q = np.array(qpos, dtype=np.float64, copy=True)
    q[..., 3:7] = np.concatenate([qpos[..., 4:7], qpos[..., 3:4]], axis=-1)
    return q
