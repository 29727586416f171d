"""Render robot motions frame by frame: one panel per motion, side by side, with the source
skeleton, stance markers and a frame counter."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import mujoco
import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.contacts import FootContacts
from retarget.errors import ConfigError
from retarget.skeleton import neutral_skeleton
from retarget.viz.camera import CameraConfig, TrackingCamera
from retarget.viz.motion_input import motion_qpos
from retarget.viz.offscreen import OffscreenRenderer
from retarget.viz.overlays import add_skeleton, add_stance_markers
from retarget.viz.scene import SceneConfig, build_render_model
from robots.registry import load_robot_spec

MAX_IMAGE_PX = 8192
"""Largest image side [px]: offscreen framebuffers beyond this fail in common OpenGL drivers (and an
8192² RGB frame is already 200 MB)."""


@dataclass(frozen=True)
class RenderConfig:
    """Image, timing and decorations of a rendered motion."""

    width_px: int = 640
    """Image width [px] (all panels together); even, for H.264's 4:2:0 chroma."""
    height_px: int = 480
    """Image height [px]; even."""
    fps: float | None = None
    """Output frame rate [Hz]; None keeps the first motion's rate. Frames are the motion's
    nearest frames in time (no interpolation)."""
    camera: CameraConfig = field(default_factory=CameraConfig)
    """Tracking camera, one per panel (each follows its own robot)."""
    skeleton_offset_m: float = 0.9
    """The source skeleton starts this far to the image's right of the robot [m]; 0 draws it over the robot."""
    show_contacts: bool = True
    """Mark human stance with green discs under the robot's feet and the skeleton's."""
    show_text: bool = True
    """Clip name, frame counter and time in the top-left corner, panel label at the bottom."""
    scene: SceneConfig = field(default_factory=SceneConfig)
    """Floor, sky and light."""

    def __post_init__(self) -> None:
        for name in ("width_px", "height_px"):
            value = getattr(self, name)
            if value < 16 or value % 2 or value > MAX_IMAGE_PX:
                raise ConfigError(f"{name} must be an even number from 16 to {MAX_IMAGE_PX}, got {value}")
        if self.fps is not None and not self.fps > 0:
            raise ConfigError(f"fps must be positive, got {self.fps}")


@dataclass(frozen=True)
class Panel:
    """One motion to draw, with what is known about its source."""

    motion: RobotMotion
    robot: str
    """Bundled robot name driving the motion."""
    label: str = ""
    """Text at the panel's bottom (e.g. 'ours', 'ASAP')."""
    skeleton_w: np.ndarray | None = None
    """(T, 24, 3) [m] source human joints to draw, or None."""
    contacts: FootContacts | None = None
    """Human stance per frame (T, 2), or None."""


def display_name(clip: str) -> str:
    """A clip name without ASAP's library prefix ('0-motions_raw_tairantestbed_smpl_video_x' → 'video_x')."""
    return re.sub(r"^\d+-motions_raw_.*?_smpl_", "", clip)


class _PanelState:
    def __init__(self, panel: Panel, model: mujoco.MjModel, config: RenderConfig):
        self.panel = panel
        self.data = mujoco.MjData(model)
        self.qpos = motion_qpos(panel.motion, panel.robot, model)
        m = panel.motion
        self.camera = TrackingCamera(config.camera, m.root_pos_w, m.root_quat_w, m.fps)
        robot = load_robot_spec(panel.robot)
        self.feet = [(model.body(link).id, robot.sole_points_b(link)) for link in robot.foot_links]
        self.skeleton_w = None
        if panel.skeleton_w is not None:
            # Start the skeleton at the robot's starting spot, shifted to the image's right.
            shift = m.root_pos_w[0, :2] - panel.skeleton_w[0, 0, :2]
            offset = np.array([shift[0], shift[1], 0.0]) + config.skeleton_offset_m * self.camera.right_w()
            self.skeleton_w = panel.skeleton_w + offset

    def frame_at(self, time_s: float) -> int:
        m = self.panel.motion
        return int(min(max(round(time_s * m.fps), 0), m.num_frames - 1))

    def feet_centre_w(self) -> np.ndarray:
        return np.array([(self.data.xpos[b] + pts @ self.data.xmat[b].reshape(3, 3).T).mean(0) for b, pts in self.feet])


class MotionRenderer:
    """Renders one or more motions (of the same robot model) as side-by-side panels."""

    def __init__(self, panels: list[Panel], config: RenderConfig = RenderConfig()):
        if not panels:
            raise ConfigError("nothing to render: no motion given")
        robots = {p.robot for p in panels}
        if len(robots) != 1:
            raise ConfigError(f"side-by-side panels must share one robot model, got {sorted(robots)}")
        self.config = config
        max_size = (max(1920, config.width_px), max(1080, config.height_px))
        self.model = build_render_model(panels[0].robot, config.scene, max_size)
        self._renderer = OffscreenRenderer(self.model, config.width_px, config.height_px)
        self._viewports = self._renderer.panel_viewports(len(panels))
        self._states = [_PanelState(p, self.model, config) for p in panels]
        self._parents = neutral_skeleton().parents
        first = panels[0].motion
        self.fps = float(config.fps or first.fps)
        self.num_frames = int(np.floor((first.num_frames - 1) / first.fps * self.fps + 1e-9)) + 1

    def render_frame(self, index: int, show_robot: bool = True) -> np.ndarray:
        """Output frame `index` (0 ≤ index < num_frames) as a (H, W, 3) uint8 image."""
        time_s = index / self.fps
        for state, viewport in zip(self._states, self._viewports):
            frame = state.frame_at(time_s)
            state.data.qpos[:] = state.qpos[frame]
            mujoco.mj_kinematics(self.model, state.data)
            stance = None
            if self.config.show_contacts and state.panel.contacts is not None:
                stance = state.panel.contacts.stance[min(frame, len(state.panel.contacts.stance) - 1)]

            def hook(scene, state=state, frame=frame, stance=stance):
                if stance is not None and show_robot:
                    add_stance_markers(scene, state.feet_centre_w(), stance)
                if state.skeleton_w is not None:
                    add_skeleton(scene, state.skeleton_w[frame], self._parents, stance)

            text = None
            if self.config.show_text:
                m = state.panel.motion
                text = (
                    "clip\nframe\ntime",
                    f"{display_name(m.name)}\n{frame + 1}/{m.num_frames}\n{frame / m.fps:.2f} s",
                )
            label = state.panel.label if self.config.show_text else None
            self._renderer.draw(
                state.data, state.camera.at_frame(frame), viewport, hook, text, label, show_robot=show_robot
            )
        return self._renderer.read()

    def frames(self, step: int = 1) -> Iterator[np.ndarray]:
        for index in range(0, self.num_frames, step):
            yield self.render_frame(index)

    def close(self) -> None:
        self._renderer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
