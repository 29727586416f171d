"""Robot descriptions bundled with asap-retarget and the models built from them."""

from robots.registry import ROBOT_NAMES, ROBOTS_DIR, RobotSpec, load_robot_spec

__all__ = ["ROBOT_NAMES", "ROBOTS_DIR", "RobotSpec", "load_robot_spec"]
