"""Optional per-clip stages of a batch: the physics filter and the retargeting metrics.

Each is a module-level :data:`retarget.batch.clip.ClipStage` (so it pickles by reference for worker
processes and Ray tasks) and adds its figures to the clip's manifest row under a prefix.
"""

from __future__ import annotations

from dataclasses import replace

from retarget.batch.clip import StageResult
from retarget.config import RetargetConfig
from retarget.pipeline import RetargetResult
from retarget.resample import resample_sequence
from retarget.skeleton import smpl_forward_kinematics
from retarget.smpl_sequence import SmplSequence

# Metrics copied into the manifest by the eval stage (see retarget.metrics.ClipMetrics for units).
EVAL_FIELDS: tuple[str, ...] = (
    "limb_direction_error_deg",
    "stance_sole_abs_height_mm",
    "stance_tilt_deg",
    "stance_slide_cm_s",
    "penetration_all_geoms_mm",
    "floating_fraction",
    "joint_limit_violation_frames",
    "velocity_limit_violation_frames",
    "self_collision_fraction",
    "mean_abs_acc_rad_s2",
)


def eval_stage(result: RetargetResult, seq: SmplSequence, config: RetargetConfig) -> StageResult:
    """Score the retarget against its source (limb directions, feet, floor, limits, collisions, smoothness)."""
    from retarget.metrics import HumanReference, evaluate_motion
    from robots.registry import load_robot_spec

    src = resample_sequence(seq, result.motion.fps)
    joints_w, _ = smpl_forward_kinematics(src.pose_rotvec, src.trans_w)
    human = HumanReference.from_joints(joints_w, src.fps, config.contacts)
    metrics = evaluate_motion(result.motion, human, load_robot_spec(config.robot))
    return StageResult(metrics={f"eval.{name}": float(getattr(metrics, name)) for name in EVAL_FIELDS})


def filter_stage(result: RetargetResult, seq: SmplSequence, config: RetargetConfig) -> StageResult:
    """Physics filter verdict (keep / trim / reject). A trimmed clip is written as its longest kept
    range; a rejected one is still written, with the verdict in the manifest so it can be left out."""
    from retarget.controller.figures import controller_metrics
    from retarget.filter import filter_result

    verdict = filter_result(result, seq, robot_name=config.robot)
    metrics = {
        "filter.kept_frames": float(verdict.kept_frames),
        "filter.kept_fraction": verdict.kept_frames / max(verdict.num_frames, 1),
        **controller_metrics(verdict),  # when the filter's layers include the controller
    }
    label = verdict.decision if verdict.first_failure is None else f"{verdict.decision}: {verdict.first_failure}"
    motion = None
    if verdict.decision == "trim" and verdict.kept_ranges:
        start, stop = verdict.kept_ranges[0]
        m = result.motion
        motion = replace(
            m,
            root_pos_w=m.root_pos_w[start:stop],
            root_quat_w=m.root_quat_w[start:stop],
            dof_pos=m.dof_pos[start:stop],
            human_joints_w=m.human_joints_w[start:stop],
        )
    return StageResult(metrics=metrics, verdict=label, motion=motion)


def _controller(result: RetargetResult, seq: SmplSequence, config: RetargetConfig, beside: bool) -> StageResult:
    from retarget.controller import PERFORMED_SUFFIX, perform_result
    from retarget.controller.figures import controller_metrics

    out = perform_result(result, seq, robot_name=config.robot)
    verdict = out.verdict
    metrics = {
        "controller.kept_frames": float(verdict.kept_frames),
        "controller.kept_fraction": verdict.kept_frames / max(verdict.num_frames, 1),
        **controller_metrics(verdict),
        "controller.seconds": float(verdict.seconds_per_layer.get("controller", 0.0)),
    }
    label = verdict.decision if verdict.first_failure is None else f"{verdict.decision}: {verdict.first_failure}"
    if out.motion is None:
        return StageResult(metrics=metrics, verdict=label)
    if beside:
        return StageResult(
            metrics=metrics, verdict=label, extra_motions={result.motion.name + PERFORMED_SUFFIX: out.motion}
        )
    return StageResult(metrics=metrics, verdict=label, motion=out.motion)


def controller_stage(result: RetargetResult, seq: SmplSequence, config: RetargetConfig) -> StageResult:
    """Controller verdict (sampling-MPC tracking in the trainers' simulator); the motion the simulated G1
    performed over the longest kept range is written in place of the kinematic retarget. A rejected clip
    keeps its kinematic retarget, with the verdict in the manifest so it can be left out."""
    return _controller(result, seq, config, beside=False)


def controller_beside_stage(result: RetargetResult, seq: SmplSequence, config: RetargetConfig) -> StageResult:
    """As :func:`controller_stage`, but the performed motion goes into the library beside the kinematic
    retarget, under the clip's name + ``_performed``."""
    return _controller(result, seq, config, beside=True)


STAGES = {
    "eval": eval_stage,
    "filter": filter_stage,
    "controller": controller_stage,
    "controller-beside": controller_beside_stage,
}
