"""The robot spec: facts read from a URDF (joints, limits, link tree, foot contact points).

Nothing here is typed in by hand: joint names, order, axes and limits come from the
robot file, so a different description file gives a different, consistent spec.
Numbers the URDF does not carry (PD gains, rotor inertia, matched bodies) live in
:mod:`robots.g1`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robots.errors import MotionFileError


@dataclass(frozen=True)
class JointSpec:
    """One actuated (revolute) joint as the URDF declares it."""

    name: str
    """URDF joint name, e.g. ``left_knee_joint``."""
    parent_link: str
    child_link: str
    axis_b: tuple[float, float, float]
    """Rotation axis in the child link frame (unit vector)."""
    lower_rad: float
    """Lower position limit [rad]."""
    upper_rad: float
    """Upper position limit [rad]."""
    velocity_limit_rad_s: float
    """Velocity limit [rad/s]."""
    effort_limit_nm: float
    """Effort (torque) limit [N·m]."""


@dataclass(frozen=True)
class UrdfFacts:
    """What a URDF says about a floating-base humanoid."""

    urdf_path: Path
    root_link: str
    joints: tuple[JointSpec, ...]
    """Actuated joints in file order; this is the DOF order of every motion array."""
    link_parent: dict[str, str]
    """Each link's parent link (fixed and revolute joints alike)."""
    collision_spheres: dict[str, tuple[tuple[np.ndarray, float], ...]]
    """Per link: (centre in the link frame [m], radius [m]) of its collision spheres."""

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def lower_rad(self) -> np.ndarray:
        return np.array([j.lower_rad for j in self.joints])

    @property
    def upper_rad(self) -> np.ndarray:
        return np.array([j.upper_rad for j in self.joints])

    @property
    def velocity_limit_rad_s(self) -> np.ndarray:
        return np.array([j.velocity_limit_rad_s for j in self.joints])

    @property
    def effort_limit_nm(self) -> np.ndarray:
        return np.array([j.effort_limit_nm for j in self.joints])

    @property
    def joint_axes_b(self) -> np.ndarray:
        return np.array([j.axis_b for j in self.joints])


def _floats(text: str | None, default: str) -> np.ndarray:
    return np.array([float(v) for v in (text or default).split()])


def _attr(element: ET.Element | None, name: str, path: Path, where: str) -> str:
    """An attribute the URDF must have; a missing one is a :class:`MotionFileError` naming the file and place."""
    value = None if element is None else element.get(name)
    if value is None:
        raise MotionFileError(path, f"{where} has no {name!r} attribute")
    return value


def read_urdf(path: str | Path) -> UrdfFacts:
    """Parse the joint tree, limits and collision spheres of a URDF file."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise MotionFileError(path, f"cannot read the robot description: {exc}") from exc
    joints: list[JointSpec] = []
    link_parent: dict[str, str] = {}
    for joint in root.findall("joint"):
        name = _attr(joint, "name", path, "a <joint>")
        parent = _attr(joint.find("parent"), "link", path, f"joint {name!r}'s <parent>")
        child = _attr(joint.find("child"), "link", path, f"joint {name!r}'s <child>")
        link_parent[child] = parent
        if joint.get("type") not in ("revolute", "continuous"):
            continue
        axis_el = joint.find("axis")
        axis = _floats(axis_el.get("xyz") if axis_el is not None else None, "1 0 0")
        limit = joint.find("limit")
        if limit is None:
            raise MotionFileError(path, f"joint {name!r} has no <limit>")
        joints.append(
            JointSpec(
                name=name,
                parent_link=parent,
                child_link=child,
                axis_b=tuple(axis / np.linalg.norm(axis)),
                lower_rad=float(limit.get("lower", "-3.14159")),
                upper_rad=float(limit.get("upper", "3.14159")),
                velocity_limit_rad_s=float(limit.get("velocity", "inf")),
                effort_limit_nm=float(limit.get("effort", "inf")),
            )
        )
    links = [_attr(link, "name", path, "a <link>") for link in root.findall("link")]
    roots = [name for name in links if name not in link_parent]
    if len(roots) != 1:
        raise MotionFileError(path, f"expected one root link, found {roots}")
    spheres: dict[str, tuple[tuple[np.ndarray, float], ...]] = {}
    for link in root.findall("link"):
        found = []
        for col in link.findall("collision"):
            sphere = col.find("geometry/sphere")
            if sphere is None:
                continue
            origin = col.find("origin")
            centre = _floats(origin.get("xyz") if origin is not None else None, "0 0 0")
            found.append((centre, float(_attr(sphere, "radius", path, "a collision <sphere>"))))
        if found:
            spheres[_attr(link, "name", path, "a <link>")] = tuple(found)
    return UrdfFacts(
        urdf_path=path,
        root_link=roots[0],
        joints=tuple(joints),
        link_parent=link_parent,
        collision_spheres=spheres,
    )
