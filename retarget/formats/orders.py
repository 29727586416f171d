"""Body and joint orders of the downstream consumers, as data, checked against the robot model.

BeyondMimic and mjlab index joints and bodies **by position**, so a file in another order loads
without error and trains on the wrong bodies. The orders below are the consumers' own (sources in
each :class:`ConsumerOrder`); :func:`consumer_order` checks each one against the bundled 29-dof
G1 on first use, by name: every joint exists, every body is the child link of the joint at the
same position, and the order is the tree walk the consumer's simulator does (IsaacLab/PhysX:
breadth-first over the URDF; MuJoCo: depth-first over the model's bodies that have a joint).
GMR's and holosoma's lists add marker bodies the URDF lacks; their offsets are in :data:`GMR_MARKERS` and
:data:`HOLOSOMA_MARKERS`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import cache

from retarget.errors import ConfigError
from robots.registry import RobotSpec, load_robot_spec

CONSUMER_ROBOT = "g1_29dof"
"""The robot every 29-dof consumer (BeyondMimic, mjlab, holosoma, GMR, Unitree CSV) is built on."""

_SIDES = ("left", "right")
_LEG = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
_WAIST = ("waist_yaw", "waist_roll", "waist_pitch")
_ARM = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")

ISAACLAB_G1_JOINTS: tuple[str, ...] = tuple(
    f"{n}_joint"
    for n in (
        "left_hip_pitch",
        "right_hip_pitch",
        "waist_yaw",
        "left_hip_roll",
        "right_hip_roll",
        "waist_roll",
        "left_hip_yaw",
        "right_hip_yaw",
        "waist_pitch",
        "left_knee",
        "right_knee",
        "left_shoulder_pitch",
        "right_shoulder_pitch",
        "left_ankle_pitch",
        "right_ankle_pitch",
        "left_shoulder_roll",
        "right_shoulder_roll",
        "left_ankle_roll",
        "right_ankle_roll",
        "left_shoulder_yaw",
        "right_shoulder_yaw",
        "left_elbow",
        "right_elbow",
        "left_wrist_roll",
        "right_wrist_roll",
        "left_wrist_pitch",
        "right_wrist_pitch",
        "left_wrist_yaw",
        "right_wrist_yaw",
    )
)
"""IsaacLab articulation order of the 29-dof G1 (BeyondMimic's `joint_pos` columns)."""

MUJOCO_G1_JOINTS: tuple[str, ...] = tuple(
    [f"{s}_{j}_joint" for s in _SIDES for j in _LEG]
    + [f"{j}_joint" for j in _WAIST]
    + [f"{s}_{j}_joint" for s in _SIDES for j in _ARM]
)
"""MuJoCo depth-first order (mjlab's and holosoma's `joint_pos` columns; also the URDF's)."""


def _child_links(joints: tuple[str, ...]) -> tuple[str, ...]:
    return ("pelvis",) + tuple(
        "torso_link" if j == "waist_pitch_joint" else j.removesuffix("_joint") + "_link" for j in joints
    )


ISAACLAB_G1_BODIES: tuple[str, ...] = _child_links(ISAACLAB_G1_JOINTS)
"""BeyondMimic's 30 bodies: pelvis, then the child link of each joint in IsaacLab order."""
MUJOCO_G1_BODIES: tuple[str, ...] = _child_links(MUJOCO_G1_JOINTS)
"""mjlab's 30 bodies: MuJoCo depth-first order, fixed links merged into their parents."""

BEYONDMIMIC_TRACKED_BODIES: tuple[str, ...] = (
    "pelvis",
    "left_hip_roll_link",
    "left_knee_link",
    "left_ankle_roll_link",
    "right_hip_roll_link",
    "right_knee_link",
    "right_ankle_roll_link",
    "torso_link",
    "left_shoulder_roll_link",
    "left_elbow_link",
    "left_wrist_yaw_link",
    "right_shoulder_roll_link",
    "right_elbow_link",
    "right_wrist_yaw_link",
)
"""Bodies BeyondMimic's and mjlab's G1 tracking task follows (anchor: torso_link)."""

GMR_MARKERS: dict[str, tuple[str, tuple[float, float, float]]] = {
    "left_toe_link": ("left_ankle_roll_link", (0.1, 0.0, -0.02)),
    "right_toe_link": ("right_ankle_roll_link", (0.1, 0.0, -0.02)),
    "head_mocap": ("torso_link", (0.0, 0.0, 0.4)),
    "imu_in_torso": ("torso_link", (-0.03959, -0.00224, 0.14792)),
}
"""Bodies of GMR's G1 that a URDF may lack: name → (parent link, offset in its frame [m]), from GMR's
`assets/unitree_g1/g1_mocap_29dof.xml` (YanjieZe/GMR @ 677bf8c). Used only where the robot has no such link
(`imu_in_torso` is a URDF link of the 29-dof G1, not of ASAP's 23-dof one)."""

GMR_G1_BODIES: tuple[str, ...] = (
    ("pelvis",)
    + tuple(f"left_{j}_link" for j in _LEG)
    + ("left_toe_link", "pelvis_contour_link")
    + tuple(f"right_{j}_link" for j in _LEG)
    + ("right_toe_link",)
    + ("waist_yaw_link", "waist_roll_link", "torso_link", "head_link", "head_mocap", "imu_in_torso")
    + tuple(f"left_{j}_link" for j in _ARM)
    + ("left_rubber_hand",)
    + tuple(f"right_{j}_link" for j in _ARM)
    + ("right_rubber_hand",)
)
"""GMR's `link_body_list` for the G1 (38 bodies, the body order of g1_mocap_29dof.xml)."""


_SPHERES_B = ((0.12, 0.03), (0.12, -0.03), (0.14, 0.0), (-0.05, 0.025), (-0.05, -0.025))  # (x, y) at z = -0.03


def _holosoma_markers() -> dict[str, tuple[str | None, tuple[float, float, float]]]:
    markers: dict[str, tuple[str | None, tuple[float, float, float]]] = {"world": (None, (0.0, 0.0, 0.0))}
    for side, y in (("left", 1.0), ("right", -1.0)):
        markers[f"{side}_ankle_intermediate_1_link"] = (f"{side}_knee_link", (0.0, 0.0, -0.28))
        for k, (x, sy) in zip((3, 4, 5, 1, 2), _SPHERES_B):
            markers[f"{side}_ankle_roll_sphere_{k}_link"] = (f"{side}_ankle_roll_link", (x, sy, -0.03))
        for name, (x, z) in (("rubber_hand", (0.0415, 0.0)), ("thumb", (0.1215, 0.05)), ("pinky", (0.1615, -0.04))):
            markers[f"{side}_{name}_link"] = (f"{side}_wrist_yaw_link", (x, y * 0.003, z))
    markers["waist_support_link"] = ("torso_link", (0.003964, 0.0, -0.054))
    return markers


HOLOSOMA_MARKERS = _holosoma_markers()
"""Bodies of holosoma's G1 that are not URDF links here: name → (parent link, offset in its frame [m]), no
rotation; `world` is the fixed origin (parent None). Measured on holosoma's own sample
`sub3_largebox_003_mj.npz` (amazon-far/holosoma @ fc600e7): each is rigid on its parent to 1e-15 m."""


def _holosoma_side(side: str) -> tuple[str, ...]:
    return (
        tuple(f"{side}_{j}_link" for j in _LEG[:4])
        + (f"{side}_ankle_intermediate_1_link",)
        + tuple(f"{side}_{j}_link" for j in _LEG[4:])
        + tuple(f"{side}_ankle_roll_sphere_{k}_link" for k in (3, 4, 5, 1, 2))
    )


def _holosoma_arm(side: str) -> tuple[str, ...]:
    return tuple(f"{side}_{j}_link" for j in _ARM) + tuple(
        f"{side}_{n}_link" for n in ("rubber_hand", "thumb", "pinky")
    )


HOLOSOMA_G1_BODIES: tuple[str, ...] = (
    ("world", "pelvis", "pelvis_contour_link")
    + _holosoma_side("left")
    + _holosoma_side("right")
    + ("waist_yaw_link", "waist_roll_link", "torso_link", "waist_support_link")
    + _holosoma_arm("left")
    + _holosoma_arm("right")
)
"""holosoma's G1 bodies (51, its `body_names` order). holosoma looks every body of its robot up by name in the
file and fails on a missing one, so the file carries all of them."""


@dataclass(frozen=True)
class ConsumerOrder:
    """The joint and body order a consumer reads by position."""

    name: str
    joints: tuple[str, ...]
    """Joint names, in the order of the file's joint columns."""
    bodies: tuple[str, ...]
    """Body names, in the order of the file's body axis."""
    walk: str
    """Tree walk that produces this order: 'breadth-first' (IsaacLab) or 'depth-first' (MuJoCo)."""
    source: str
    """Where the order comes from."""


_ORDERS: dict[str, ConsumerOrder] = {
    o.name: o
    for o in (
        ConsumerOrder(
            "beyondmimic",
            ISAACLAB_G1_JOINTS,
            ISAACLAB_G1_BODIES,
            "breadth-first",
            "IsaacLab articulation of the G1 (HybridRobotics/whole_body_tracking)",
        ),
        ConsumerOrder(
            "mjlab",
            MUJOCO_G1_JOINTS,
            MUJOCO_G1_BODIES,
            "depth-first",
            "MuJoCo body order of mjlab's g1.xml (mujocolab/mjlab)",
        ),
    )
}


def _breadth_first_joints(robot: RobotSpec) -> tuple[str, ...]:
    """Actuated joints in breadth-first order over the URDF tree, children in file order, fixed links
    merged into their parents (what IsaacLab's articulation does)."""
    children: dict[str, list] = {}
    for joint in robot.urdf.joints:
        children.setdefault(joint.parent_link, []).append(joint)
    order: list[str] = []
    queue = deque([robot.urdf.root_link])
    while queue:
        for joint in children.get(queue.popleft(), []):
            order.append(joint.name)
            queue.append(joint.child_link)
    return tuple(order)


def _depth_first_joints(robot: RobotSpec) -> tuple[str, ...]:
    """Hinge joints in MuJoCo's body order of the model built from the URDF."""
    import mujoco

    from robots.mujoco_model import build_mujoco_model

    model = build_mujoco_model(robot)
    return tuple(model.joint(j).name for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE)


def _check(order: ConsumerOrder, robot: RobotSpec) -> None:
    child_of = {j.name: j.child_link for j in robot.urdf.joints}
    problems = [j for j in order.joints if j not in child_of]
    if problems or len(set(order.joints)) != robot.num_dof:
        raise ConfigError(f"{order.name} joint order does not name the {robot.name} joints: unknown {problems}")
    expected_bodies = (robot.urdf.root_link,) + tuple(child_of[j] for j in order.joints)
    if order.bodies != expected_bodies:
        raise ConfigError(f"{order.name} body order is not the child links of its joints on {robot.name}")
    walked = _breadth_first_joints(robot) if order.walk == "breadth-first" else _depth_first_joints(robot)
    if order.joints != walked:
        raise ConfigError(f"{order.name} joint order is not the {order.walk} walk of {robot.name}: {walked}")


@cache
def consumer_order(name: str) -> ConsumerOrder:
    """The order `name` ('beyondmimic' or 'mjlab') reads by position, checked against the 29-dof G1."""
    if name not in _ORDERS:
        raise ConfigError(f"no position-indexed order for {name!r}; known: {', '.join(_ORDERS)}")
    order = _ORDERS[name]
    _check(order, load_robot_spec(CONSUMER_ROBOT))
    return order


def _checked_body_list(consumer: str, names: tuple[str, ...], markers: dict, count: int) -> tuple[str, ...]:
    """`names` after checking each is a body of the 29-dof G1's model or a marker on one."""
    import mujoco

    from robots.mujoco_model import build_mujoco_model

    model = build_mujoco_model(load_robot_spec(CONSUMER_ROBOT))

    def known(name: str) -> bool:
        return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name) >= 0

    missing = [n for n in names if not known(n) and n not in markers]
    missing += [p for p, _ in markers.values() if p is not None and not known(p)]
    if missing or len(set(names)) != count:
        raise ConfigError(f"{consumer} body list names bodies the {CONSUMER_ROBOT} model lacks: {missing}")
    return names


@cache
def gmr_body_list() -> tuple[str, ...]:
    """GMR's 38 body names, checked: each is a link of the 29-dof G1 or a marker on one."""
    return _checked_body_list("GMR", GMR_G1_BODIES, GMR_MARKERS, 38)


@cache
def holosoma_body_list() -> tuple[str, ...]:
    """holosoma's 51 body names, checked like :func:`gmr_body_list`."""
    return _checked_body_list("holosoma", HOLOSOMA_G1_BODIES, HOLOSOMA_MARKERS, 51)
