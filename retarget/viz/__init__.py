"""See the motion: offscreen MuJoCo videos of robot motions, per-clip plots, a batch report.

Modules: ``backend`` (headless GL: EGL, else OSMesa), ``scene`` (render variant of the robot
model), ``mesh_lod`` (lighter meshes), ``camera`` (tracking camera), ``overlays`` (skeleton,
stance markers), ``offscreen`` (GL renderer), ``motion_input`` (motions, source skeleton),
``motion_view`` (frames of one or more motions), ``video`` (encoding), ``render_clip``
(the render command), ``foot_track`` and ``plots`` (figures), ``report_html`` and ``report``
(the batch page). Rendering modules import MuJoCo's GL bindings only when used.
"""

from retarget.viz.camera import CameraConfig, parse_camera
from retarget.viz.motion_view import MotionRenderer, Panel, RenderConfig
from retarget.viz.render_clip import RenderSummary, load_panels, render_library_clip
from retarget.viz.scene import SceneConfig

__all__ = [
    "CameraConfig",
    "MotionRenderer",
    "Panel",
    "RenderConfig",
    "RenderSummary",
    "SceneConfig",
    "load_panels",
    "parse_camera",
    "render_library_clip",
]
