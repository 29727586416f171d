"""Retargeting metrics (names as in DESIGN.md): a robot motion scored against its SOURCE human clip.

from retarget.metrics import evaluate_library, summarize
clips = evaluate_library("lib.pkl", "clips_dir/")   # list[ClipMetrics]
print(summarize(clips).median["stance_tilt_deg"])
"""

from retarget.metrics.clip import ClipMetrics, evaluate_motion, numeric_fields
from retarget.metrics.config import MetricsConfig
from retarget.metrics.human import HumanReference, find_source_clip, load_human_reference, source_stem
from retarget.metrics.library import (
    MetricsSummary,
    evaluate_library,
    report_dict,
    robot_for_dof_count,
    summarize,
    write_report_json,
)
from retarget.metrics.limbs import LIMB_SEGMENTS
from retarget.metrics.replay import RobotReplay, motion_qpos, replay_motion

__all__ = [
    "LIMB_SEGMENTS",
    "ClipMetrics",
    "HumanReference",
    "MetricsConfig",
    "MetricsSummary",
    "RobotReplay",
    "evaluate_library",
    "evaluate_motion",
    "find_source_clip",
    "load_human_reference",
    "motion_qpos",
    "numeric_fields",
    "replay_motion",
    "report_dict",
    "robot_for_dof_count",
    "source_stem",
    "summarize",
    "write_report_json",
]
