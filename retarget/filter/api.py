"""The physics filter's entry points: `filter_result` (the batch stage) and `filter_clip` (a file).

Order of work: layer 1 on the human source (resampled to the robot's rate, so frame k of
every mask is frame k of the robot motion) and on the robot result, after re-grounding
both; layer 2 on the re-grounded robot; the bad frames of every failing check, widened by
`trim_margin_s`, split the clip into good ranges; ranges shorter than `min_keep_s` are
dropped; layer 3 replays each kept range from its first frame (and, when it decides,
cuts a range at its failure); layer 4 (opt-in, "controller") tracks the whole re-grounded robot
motion with the sampling-MPC tracker of :mod:`retarget.controller` and, when it decides, its
failures cut the clip and the dynamic layer's checks become informational.
The verdict is 'keep' when the whole clip survives, 'trim'
when some ranges do, 'reject' when none does.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from retarget.config import RetargetConfig
from retarget.filter.config import FilterConfig
from retarget.filter.dynamics import analyse_dynamics, feet_in_contact
from retarget.filter.frames import dilate, good_ranges, seconds_to_frames
from retarget.filter.human_checks import check_human, smpl_joint_speed_limits
from retarget.filter.replay import replay_range
from retarget.filter.robot_checks import check_robot
from retarget.filter.verdict import KEEP, REJECT, TRIM, CheckResult, Verdict
from retarget.pipeline import RetargetResult, retarget_sequence
from retarget.readers.source import read_clip
from retarget.resample import resample_sequence
from retarget.smpl_sequence import SmplSequence
from robots.mujoco_model import build_mujoco_model, dof_qpos_indices
from robots.registry import load_robot_spec

if TYPE_CHECKING:
    from retarget.controller.track import TrackingRun


def _replay_check(outcomes, num: int, fps: float, cfg: FilterConfig) -> CheckResult:
    bad = np.zeros(num, dtype=bool)
    back = seconds_to_frames(cfg.replay.backoff_s, fps)
    worst, first = 0.0, None
    for o in outcomes:
        worst = max(worst, o.max_distance_m)
        if o.failed:
            bad[max(o.fail_frame - back, o.start) : o.stop] = True
            first = first if first is not None else o
    reason = (
        f"the simulated G1 (PD + inverse-dynamics feed-forward) loses the motion at frame {first.fail_frame} "
        f"({first.fail_frame / fps:.2f} s): mean body distance > {cfg.replay.fail_distance_m:g} m"
        if first is not None
        else ""
    )
    return CheckResult(
        "replay.tracking",
        "replay",
        bad,
        worst,
        cfg.replay.fail_distance_m,
        "m",
        reason,
        {"ranges_replayed": len(outcomes)},
    )


def _controller_layer(
    qpos: np.ndarray, fps: float, robot_name: str, cfg: FilterConfig, joint_torque_nm: np.ndarray
) -> tuple[TrackingRun, CheckResult]:
    from retarget.controller.track import track_motion
    from retarget.controller.verdict import controller_check

    run = track_motion(qpos, fps, robot_name, cfg.controller, joint_torque_nm)
    return run, controller_check(run, len(qpos), fps, cfg.controller)


def filter_result(
    result: RetargetResult, seq: SmplSequence, config: FilterConfig = FilterConfig(), robot_name: str = "g1_23dof"
) -> Verdict:
    """Verdict on one retargeted clip. `seq` is the SMPL source at any rate (resampled here)."""
    return filter_result_and_run(result, seq, config, robot_name)[0]


def filter_result_and_run(
    result: RetargetResult, seq: SmplSequence, config: FilterConfig | None = None, robot_name: str = "g1_23dof"
) -> tuple[Verdict, TrackingRun | None]:
    """:func:`filter_result` plus the controller layer's tracking run (None when that layer did not run),
    from which :mod:`retarget.controller.perform` makes the performed motion."""
    config = config or FilterConfig()
    robot = load_robot_spec(robot_name)
    motion = result.motion
    fps, num = float(motion.fps), motion.num_frames
    seconds: dict[str, float] = {}
    checks: list[CheckResult] = []
    repairs = []
    layers = config.layers
    start = time.perf_counter()
    src = resample_sequence(seq, fps)
    limits = smpl_joint_speed_limits(robot.joint_names, robot.velocity_limit_rad_s)
    human = check_human(src, config.kinematic, joint_speed_limits_rad_s=limits)
    if human.repair is not None:
        repairs.append(human.repair)
    idx = dof_qpos_indices(build_mujoco_model(robot), robot)
    rk = check_robot(result.qpos, idx, fps, robot, config.kinematic)
    if rk.repair is not None:
        repairs.append(rk.repair)
    if "kinematic" in layers:
        checks += [c for c in human.checks if len(c.bad) == num] + list(rk.checks)
    seconds["kinematic"] = time.perf_counter() - start
    dyn = None
    if "dynamic" in layers:
        start = time.perf_counter()
        dyn = analyse_dynamics(rk.qpos, rk.geometry.sole_w, fps, robot, config.dynamic)
        checks += list(dyn.checks)
        seconds["dynamic"] = time.perf_counter() - start
    run, controller_info = None, {}
    if "controller" in layers:
        start = time.perf_counter()
        if dyn is None:  # the tracker feeds forward the torques the motion needs
            dyn = analyse_dynamics(rk.qpos, rk.geometry.sole_w, fps, robot, config.dynamic)
        run, check = _controller_layer(rk.qpos, fps, robot_name, config, dyn.joint_torque_nm)
        controller_info = {"decides": config.controller.decides, "check": check.to_dict()}
        if config.controller.decides:
            if config.controller.overrides_dynamic:
                overridden = [c for c in checks if c.layer == "dynamic"]
                checks = [c for c in checks if c.layer != "dynamic"]
                controller_info["overridden"] = [c.to_dict() for c in overridden if not c.passed]
            checks.append(check)
        seconds["controller"] = time.perf_counter() - start
    bad = np.zeros(num, dtype=bool)
    for c in checks:
        bad |= c.bad
    min_frames = seconds_to_frames(config.min_keep_s, fps)
    ranges = good_ranges(dilate(bad, round(config.trim_margin_s * fps)), min(min_frames, num))
    replay_info = {}
    if "replay" in layers and ranges:
        start = time.perf_counter()
        contact = dyn.in_contact if dyn is not None else feet_in_contact(rk.geometry.sole_w, fps, config.dynamic)
        outcomes = [
            replay_range(
                rk.qpos,
                rk.geometry.body_pos_w,
                contact,
                fps,
                robot,
                a,
                b,
                config.replay,
                config.dynamic.friction_coefficient,
            )
            for a, b in ranges
        ]
        replay_check = _replay_check(outcomes, num, fps, config)
        replay_info = {"decides": config.replay.decides, "ranges": [o.to_dict(fps) for o in outcomes]}
        if config.replay.decides:
            checks.append(replay_check)
            ranges = good_ranges(bad | dilate(replay_check.bad, 0), min(min_frames, num))
        else:
            replay_info["check"] = replay_check.to_dict()
        seconds["replay"] = time.perf_counter() - start
    failing = [c for c in checks if not c.passed]
    if not failing:
        decision, ranges = KEEP, [(0, num)]
    else:
        decision = TRIM if ranges else REJECT
    first = failing[0] if failing else None
    if first is None:
        reason = "all checks pass" + ("; " + "; ".join(r.description for r in repairs) if repairs else "")
    else:
        kept = sum(b - a for a, b in ranges)
        reason = f"{first.name}: {first.reason}" + (f" (kept {kept}/{num} frames)" if decision == TRIM else "")
    verdict = Verdict(
        clip=motion.name,
        decision=decision,
        num_frames=num,
        fps=fps,
        kept_ranges=tuple(ranges),
        first_failure=None if first is None else first.name,
        reason=reason,
        checks=tuple(checks),
        repairs=tuple(repairs),
        seconds_per_layer=seconds,
        replay=replay_info,
        controller=controller_info,
    )
    return verdict, run


def filter_sequence(
    seq: SmplSequence, config: FilterConfig = FilterConfig(), retarget_config: RetargetConfig = RetargetConfig()
) -> tuple[RetargetResult, Verdict]:
    """Retarget an SMPL sequence and filter the result."""
    result = retarget_sequence(seq, retarget_config)
    return result, filter_result(result, seq, config, retarget_config.robot)


def filter_clip(
    path: str | Path, config: FilterConfig = FilterConfig(), retarget_config: RetargetConfig = RetargetConfig()
) -> Verdict:
    """Read an AMASS-layout clip, retarget it and return the filter's verdict."""
    return filter_sequence(read_clip(path, retarget_config.source), config, retarget_config)[1]
