"""A camera that follows the robot's root: smoothed horizontal path, fixed height and angles."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.errors import ConfigError

# Azimuth relative to the robot's initial heading [deg]: MuJoCo's free camera looks along
# (cos el cos az, cos el sin az, sin el), so a camera in front of the robot looks along −heading.
PRESETS_DEG: dict[str, tuple[float, float]] = {
    "front": (180.0, -12.0),
    "three_quarter": (150.0, -15.0),
    "side": (-90.0, -10.0),
    "back": (0.0, -15.0),
    "top": (180.0, -75.0),
}


@dataclass(frozen=True)
class CameraConfig:
    """Where the tracking camera stands relative to the robot."""

    preset: str = "three_quarter"
    """One of PRESETS_DEG: sets azimuth and elevation relative to the robot's initial heading."""
    azimuth_deg: float | None = None
    """Absolute world azimuth [deg], overriding the preset's (0 looks along +x)."""
    elevation_deg: float | None = None
    """Elevation [deg] (negative looks down), overriding the preset's."""
    distance_m: float = 3.0
    """Distance from the look-at point [m]."""
    lookat_height_m: float = 0.7
    """Height of the look-at point [m]; fixed, so jumps show against the floor."""
    smoothing_s: float = 0.5
    """Width of the moving average over the root's horizontal path [s]; removes sway."""

    def __post_init__(self) -> None:
        if self.preset not in PRESETS_DEG:
            raise ConfigError(f"unknown camera preset {self.preset!r}; valid choices: {', '.join(PRESETS_DEG)}")
        if not self.distance_m > 0:
            raise ConfigError(f"camera distance must be positive, got {self.distance_m}")


def parse_camera(text: str) -> CameraConfig:
    """'three_quarter' (a preset) or 'AZIMUTH,ELEVATION[,DISTANCE]' in degrees and metres."""
    if text in PRESETS_DEG:
        return CameraConfig(preset=text)
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3):
        raise ConfigError(f"camera {text!r}: expected a preset ({', '.join(PRESETS_DEG)}) or 'AZ,EL[,DIST]'")
    distance_m = values[2] if len(values) == 3 else CameraConfig.distance_m
    return CameraConfig(azimuth_deg=values[0], elevation_deg=values[1], distance_m=distance_m)


def heading_deg(root_quat_w: np.ndarray) -> float:
    """Yaw [deg] of the root's forward (x) axis, from a wxyz quaternion."""
    w, x, y, z = root_quat_w
    return float(np.degrees(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))))


def smooth_path(root_pos_w: np.ndarray, fps: float, width_s: float) -> np.ndarray:
    """(T, 2) moving average of the root's xy path (edge frames padded by repetition)."""
    half = round(0.5 * width_s * fps)
    xy = np.asarray(root_pos_w[:, :2], dtype=np.float64)
    if half < 1 or len(xy) < 2:
        return xy.copy()
    padded = np.concatenate([np.repeat(xy[:1], half, 0), xy, np.repeat(xy[-1:], half, 0)])
    kernel = np.ones(2 * half + 1) / (2 * half + 1)
    return np.stack([np.convolve(padded[:, i], kernel, mode="valid") for i in range(2)], axis=1)


class TrackingCamera:
    """A free MjvCamera whose look-at point follows one motion's smoothed root path."""

    def __init__(self, config: CameraConfig, root_pos_w: np.ndarray, root_quat_w: np.ndarray, fps: float):
        self.config = config
        self._path_xy = smooth_path(root_pos_w, fps, config.smoothing_s)
        base_az, base_el = PRESETS_DEG[config.preset]
        self.azimuth_deg = (
            config.azimuth_deg if config.azimuth_deg is not None else heading_deg(root_quat_w[0]) + base_az
        )
        self.elevation_deg = config.elevation_deg if config.elevation_deg is not None else base_el
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.camera.distance = config.distance_m
        self.camera.azimuth = self.azimuth_deg
        self.camera.elevation = self.elevation_deg

    def at_frame(self, frame: int) -> mujoco.MjvCamera:
        xy = self._path_xy[min(max(frame, 0), len(self._path_xy) - 1)]
        self.camera.lookat[:] = [xy[0], xy[1], self.config.lookat_height_m]
        return self.camera

    def right_w(self) -> np.ndarray:
        """Unit vector pointing to the image's right, in the world (horizontal)."""
        az = np.radians(self.azimuth_deg)
        return np.array([np.sin(az), -np.cos(az), 0.0])
