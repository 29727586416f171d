"""Robot descriptions bundled with asap-retarget (URDF, meshes, provenance) and the facts read from them.

:func:`load_robot_spec` gives a robot's joint order, limits and PD gains (:class:`RobotSpec`); the MuJoCo and
pinocchio models are built by :func:`robots.mujoco_model.build_mujoco_model` and
:func:`robots.pinocchio_model.build_pinocchio_model`. This package imports nothing from the rest of the project,
and ``import robots`` loads nothing heavy (names resolve on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robots.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "ROBOTS_DIR": "robots.registry",
    "ROBOT_NAMES": "robots.registry",
    "RobotSpec": "robots.registry",
    "load_robot_spec": "robots.registry",
}
__all__ = ["ROBOTS_DIR", "ROBOT_NAMES", "RobotSpec", "load_robot_spec"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from robots.registry import ROBOT_NAMES, ROBOTS_DIR, RobotSpec, load_robot_spec
