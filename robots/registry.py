"""The bundled robots, by name, and the spec each one resolves to."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from robots import g1
from robots.errors import MotionFileError, UnknownRobotError
from robots.spec import UrdfFacts, read_urdf

ROBOTS_DIR = Path(__file__).resolve().parent

_URDF_BY_NAME: dict[str, Path] = {
    # ASAP's G1: 23 actuated joints (3 waist joints, wrists fixed); the kinematics of ASAP's .pkl files.
    "g1_23dof": ROBOTS_DIR / "g1_23dof" / "g1_29dof_anneal_23dof.urdf",
    # Unitree's full G1 rev 1.0: 29 actuated joints (adds wrist roll/pitch/yaw).
    "g1_29dof": ROBOTS_DIR / "g1_29dof" / "g1_29dof_rev_1_0.urdf",
}

ROBOT_NAMES: tuple[str, ...] = tuple(_URDF_BY_NAME)


@dataclass(frozen=True)
class RobotSpec:
    """Everything the toolchain needs to know about one robot."""

    name: str
    urdf: UrdfFacts
    matched_points: tuple[g1.MatchedPoint, ...]
    matched_frames: tuple[g1.MatchedFrame, ...]
    foot_links: tuple[str, str]
    """(left, right) foot links, whose collision spheres define the soles."""
    collision_proxies: tuple[g1.CollisionProxy, ...] = ()
    """Spheres used by the IK to keep the arms out of the hips and thighs."""

    @property
    def urdf_path(self) -> Path:
        return self.urdf.urdf_path

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.urdf.joint_names

    @property
    def num_dof(self) -> int:
        return len(self.urdf.joints)

    @property
    def lower_rad(self) -> np.ndarray:
        return self.urdf.lower_rad

    @property
    def upper_rad(self) -> np.ndarray:
        return self.urdf.upper_rad

    @property
    def velocity_limit_rad_s(self) -> np.ndarray:
        return self.urdf.velocity_limit_rad_s

    @property
    def effort_limit_nm(self) -> np.ndarray:
        return self.urdf.effort_limit_nm

    @property
    def armature_kgm2(self) -> np.ndarray:
        return np.array([g1.armature_kgm2(n) for n in self.joint_names])

    @property
    def kp(self) -> np.ndarray:
        return np.array([g1.pd_gains(n)[0] for n in self.joint_names])

    @property
    def kd(self) -> np.ndarray:
        return np.array([g1.pd_gains(n)[1] for n in self.joint_names])

    def sole_points_b(self, foot_link: str) -> np.ndarray:
        """Lowest points of the foot's collision spheres in the foot frame [m], shape (k, 3)."""
        spheres = self.urdf.collision_spheres.get(foot_link, ())
        return np.array([centre - np.array([0.0, 0.0, radius]) for centre, radius in spheres])


def robot_for_dof_count(num_dof: int, path=None) -> RobotSpec:
    """The bundled robot with `num_dof` actuated joints (23: ASAP's G1 with 3 waist joints and no
    wrists; 29: Unitree's full G1). Any other count raises :class:`MotionFileError` naming `path`."""
    for name in ROBOT_NAMES:
        spec = load_robot_spec(name)
        if spec.num_dof == num_dof:
            return spec
    counts = ", ".join(f"{n} ({load_robot_spec(n).num_dof})" for n in ROBOT_NAMES)
    raise MotionFileError(path, f"{num_dof} joint angles per frame match no bundled robot; expected one of {counts}")


@cache
def load_robot_spec(name: str = "g1_23dof") -> RobotSpec:
    """The spec of a bundled robot. Raises :class:`UnknownRobotError` listing the valid names."""
    if name not in _URDF_BY_NAME:
        raise UnknownRobotError(f"unknown robot {name!r}; valid choices: {', '.join(ROBOT_NAMES)}")
    return RobotSpec(
        name=name,
        urdf=read_urdf(_URDF_BY_NAME[name]),
        matched_points=g1.G1_MATCHED_POINTS,
        matched_frames=g1.G1_MATCHED_FRAMES,
        foot_links=g1.G1_FOOT_LINKS,
        collision_proxies=g1.G1_COLLISION_PROXIES,
    )
