"""Build the MuJoCo model of a robot from its URDF: floating base, floor, rotor inertia.

The URDF is compiled through :class:`mujoco.MjSpec`, so the MuJoCo model and the pinocchio
model (:mod:`robots.pinocchio_model`) come from the same file. Fixed links (head, hands,
sensors) are kept as bodies rather than fused, so every URDF link has a MuJoCo body with
the same name and frame.
"""

from __future__ import annotations

from functools import cache

import mujoco
import numpy as np

from robots.registry import RobotSpec, load_robot_spec


def build_mujoco_spec(robot: RobotSpec, with_floor: bool = True) -> mujoco.MjSpec:
    """An editable MjSpec of the robot with a free joint on its root link and match sites."""
    spec = mujoco.MjSpec.from_file(str(robot.urdf_path))
    # The URDF names meshes relative to its own folder ("meshes/x.STL").
    spec.meshdir = str(robot.urdf_path.parent)
    spec.compiler.fusestatic = False
    root = spec.body(robot.urdf.root_link)
    root.add_freejoint(name="floating_base")
    for jnt in robot.joint_names:
        spec.joint(jnt).armature = robot.armature_kgm2[robot.joint_names.index(jnt)]
    for point in robot.matched_points:
        spec.body(point.body).add_site(name=f"match_{point.name}", pos=list(point.offset_b), size=[0.01, 0, 0])
    if with_floor:
        spec.worldbody.add_geom(
            name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], rgba=[0.8, 0.8, 0.8, 1]
        )
    return spec


@cache
def _compiled(robot_name: str, with_floor: bool) -> mujoco.MjModel:
    return build_mujoco_spec(load_robot_spec(robot_name), with_floor).compile()


def build_mujoco_model(robot: RobotSpec | str = "g1_23dof", with_floor: bool = True) -> mujoco.MjModel:
    """Compiled MuJoCo model (cached per process; treat as read-only or copy it)."""
    name = robot if isinstance(robot, str) else robot.name
    return _compiled(name, with_floor)


def dof_qpos_indices(model: mujoco.MjModel, robot: RobotSpec) -> np.ndarray:
    """qpos address of each actuated joint, in the spec's joint order."""
    return np.array([model.jnt_qposadr[model.joint(n).id] for n in robot.joint_names])


def dof_qvel_indices(model: mujoco.MjModel, robot: RobotSpec) -> np.ndarray:
    """qvel (dof) address of each actuated joint, in the spec's joint order."""
    return np.array([model.jnt_dofadr[model.joint(n).id] for n in robot.joint_names])
