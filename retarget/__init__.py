"""asap-retarget: human SMPL motion to Unitree G1 motion libraries (IK retargeting, physics filtering, formats).

The public API, imported lazily (``import retarget`` loads nothing heavy)::

    from retarget import RetargetConfig, load_robot_spec, retarget_file, write_motion

    result = retarget_file("motions_raw/video_squat_level1_filter_amass.npz", RetargetConfig())
    write_motion("squat.pkl", result.motion, load_robot_spec("g1_23dof"))

- Retarget one clip: :func:`retarget_file` (an AMASS-layout ``.npz``), :func:`retarget_sequence` (an
  :class:`SmplSequence` you built), configured by :class:`RetargetConfig`; the result is a
  :class:`RetargetResult` holding a :class:`RobotMotion`.
- Many clips: :func:`run_batch` (:class:`BatchOptions`, :class:`BatchResult`), resumable, one folder of outputs.
- Physics filter: :func:`filter_clip` / :func:`filter_result` (:class:`FilterConfig`) give a :class:`Verdict`.
- Formats: :func:`read_motions`, :func:`write_motion` (ASAP ``.pkl``, BeyondMimic ``.npz``, Unitree ``.csv``,
  GMR ``.pkl``), :func:`convert_file`; the ASAP library dict itself: :func:`read_motion_library`,
  :func:`write_motion_library`.
- Evaluate: :func:`evaluate_library` (:class:`MetricsConfig`) scores a library against its source clips.
- Errors: everything raised on purpose is an :class:`AsapRetargetError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robots.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "AsapRetargetError": "retarget.errors",
    "BatchOptions": "retarget.batch.run",
    "BatchResult": "retarget.batch.run",
    "ConfigError": "retarget.errors",
    "ConvertConfig": "retarget.formats.convert",
    "FilterConfig": "retarget.filter.config",
    "MetricsConfig": "retarget.metrics.config",
    "MotionFileError": "retarget.errors",
    "RetargetConfig": "retarget.config",
    "RetargetResult": "retarget.pipeline",
    "RobotMotion": "retarget.asap_pkl",
    "SmplSequence": "retarget.smpl_sequence",
    "Verdict": "retarget.filter.verdict",
    "convert_file": "retarget.formats.convert",
    "evaluate_library": "retarget.metrics.library",
    "filter_clip": "retarget.filter.api",
    "filter_result": "retarget.filter.api",
    "load_robot_spec": "robots.registry",
    "read_motion_library": "retarget.asap_pkl",
    "read_motions": "retarget.formats.registry",
    "retarget_file": "retarget.pipeline",
    "retarget_sequence": "retarget.pipeline",
    "run_batch": "retarget.batch.run",
    "write_motion": "retarget.formats.registry",
    "write_motion_library": "retarget.asap_pkl",
}
__all__ = [
    "AsapRetargetError",
    "BatchOptions",
    "BatchResult",
    "ConfigError",
    "ConvertConfig",
    "FilterConfig",
    "MetricsConfig",
    "MotionFileError",
    "RetargetConfig",
    "RetargetResult",
    "RobotMotion",
    "SmplSequence",
    "Verdict",
    "convert_file",
    "evaluate_library",
    "filter_clip",
    "filter_result",
    "load_robot_spec",
    "read_motion_library",
    "read_motions",
    "retarget_file",
    "retarget_sequence",
    "run_batch",
    "write_motion",
    "write_motion_library",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from retarget.asap_pkl import RobotMotion, read_motion_library, write_motion_library
    from retarget.batch.run import BatchOptions, BatchResult, run_batch
    from retarget.config import RetargetConfig
    from retarget.errors import AsapRetargetError, ConfigError, MotionFileError
    from retarget.filter.api import filter_clip, filter_result
    from retarget.filter.config import FilterConfig
    from retarget.filter.verdict import Verdict
    from retarget.formats.convert import ConvertConfig, convert_file
    from retarget.formats.registry import read_motions, write_motion
    from retarget.metrics.config import MetricsConfig
    from retarget.metrics.library import evaluate_library
    from retarget.pipeline import RetargetResult, retarget_file, retarget_sequence
    from retarget.smpl_sequence import SmplSequence
    from robots.registry import load_robot_spec
