"""Play a trained policy: one deterministic rollout from phase 0, recorded as a :class:`RobotMotion`
(root pose + joint angles per policy step) and rendered with the motion viewer (`asap-retarget play`).

The rollout runs in the training environment (one environment, no randomization, no joint noise),
on the nominal simulator or a "real" profile of :mod:`trainers.real`. Unlike an evaluation it does
not stop at the 0.5 m failure rule: a video should show the whole clip, falls included; the metrics
of the rollout are still reported, over the frames before the first failure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from retarget.asap_pkl import RobotMotion
from retarget.viz.motion_view import MotionRenderer, Panel, RenderConfig
from retarget.viz.video import write_still, write_video
from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.evaluate import eval_env_config
from trainers.metrics import SUCCESS_DISTANCE_M, TrackingMetrics, tracking_metrics
from trainers.real.model import build_real_model
from trainers.real.profiles import DEFAULT_REAL_PROFILE
from trainers.reference import MotionReference
from trainers.state import TrackingState

Policy = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class PlayResult:
    """A recorded rollout."""

    motion: RobotMotion
    """The robot's root pose and joint angles at every policy step (frame 0: the reset state), at the policy rate."""
    metrics: TrackingMetrics
    """The paper's metrics over the frames up to the first failure (0.5 m rule)."""
    failed_at_frame: int | None
    """First frame whose mean point distance exceeded 0.5 m, or None."""


class _RecordingEnv(TrackingEnv):
    """The tracking environment, keeping the state a finished episode had before its automatic reset."""

    state_before_reset: TrackingState | None = None
    """The state the last reset replaced (None before the constructor's first reset)."""

    def reset_envs(self, ids, start_phase=None, clip_ids=None) -> None:
        self.state_before_reset = getattr(self, "state", None)  # TrackingEnv sets ``state`` in its first reset
        super().reset_envs(ids, start_phase, clip_ids)


def _root_and_dofs(s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # The pelvis is the free joint's body and sits at its origin, so its xpos/xquat are the root pose.
    return s.point_pos_w[0, 0].copy(), s.body_quat_w[0, 0].copy(), s.dof_pos[0].copy()


def play_policy(
    policy: Policy,
    reference: MotionReference,
    env_cfg: TrackingEnvConfig,
    profile: str = DEFAULT_REAL_PROFILE,
    max_steps: int | None = None,
) -> PlayResult:
    """Roll ``policy`` out on ``reference`` from phase 0 to the clip's end (or ``max_steps`` policy steps)."""
    cfg = eval_env_config(env_cfg)
    model = build_real_model(profile, cfg.sim)
    env = _RecordingEnv([reference], 1, cfg, seed=0, model=model)
    env.termination_distance_m = np.inf  # play on through a fall
    env.reset_envs(np.zeros(1, dtype=int), start_phase=np.zeros(1), clip_ids=np.zeros(1, dtype=int))
    p, q, d = _root_and_dofs(env.state)
    root, quat, dofs = [p], [q], [d]
    points, ref_points = [env.state.point_pos_w[0]], [env.state.ref_point_pos_w[0]]
    limit = env.max_episode_length if max_steps is None else min(max_steps, env.max_episode_length)
    obs, _ = env.get_observations()
    for _ in range(limit):
        with torch.no_grad():
            actions = policy(obs)
        obs, _, dones, _ = env.step(actions)
        done = bool(dones[0])
        p, q, d = _root_and_dofs(env.state_before_reset if done else env.state)
        root.append(p)
        quat.append(q)
        dofs.append(d)
        points.append(env.step_points_w[0][0])
        ref_points.append(env.step_points_w[1][0])
        if done:
            break
    robot_pts, ref_pts = np.stack(points), np.stack(ref_points)
    far = np.flatnonzero(np.linalg.norm(robot_pts - ref_pts, axis=-1).mean(-1) > SUCCESS_DISTANCE_M)
    failed_at = int(far[0]) if far.size else None
    cut = len(points) if failed_at is None else failed_at + 1
    motion = RobotMotion(
        name=f"{reference.name}_policy",
        fps=1.0 / env.policy_dt_s,
        root_pos_w=np.stack(root),
        root_quat_w=np.stack(quat),
        dof_pos=np.stack(dofs),
        human_joints_w=np.zeros((len(root), 24, 3)),
    )
    return PlayResult(motion, tracking_metrics([(robot_pts[:cut], ref_pts[:cut])]), failed_at)


def render_rollout(
    motion: RobotMotion,
    output: str | Path,
    config: RenderConfig,
    robot: str,
    compare: RobotMotion | None = None,
    max_frames: int | None = None,
) -> int:
    """Render the rollout (beside the reference ``compare``) to a video, or one still for ``.png``; frames written."""
    panels = [Panel(motion, robot, "policy")]
    if compare is not None:
        panels.append(Panel(compare, robot, "reference"))
    with MotionRenderer(panels, config) as renderer:
        count = renderer.num_frames if max_frames is None else min(max_frames, renderer.num_frames)
        if Path(output).suffix.lower() == ".png":
            write_still(output, renderer.render_frame(count // 2))
            return 1
        return write_video(output, (renderer.render_frame(i) for i in range(count)), renderer.fps)


def reference_motion(name: str, library: str | Path, clip: str | None) -> RobotMotion:
    """The reference clip itself, for the side-by-side panel."""
    from retarget.viz.motion_input import load_robot_motion

    return dataclasses.replace(load_robot_motion(library, clip), name=name)
