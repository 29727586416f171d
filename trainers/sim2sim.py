"""Sim-to-sim: an exported policy (ONNX + its JSON sidecar) driving the G1 in a plain MuJoCo loop.

This is the deployment path, built only from what the export writes: no ``TrackingEnv``, no batch,
no training config. The robot's actuators are bare torque motors and the loop runs its own PD:

    every 1/pd_hz:   τ = clip(Kp·(q* − q) − Kd·q̇, ±effort_limit)      (Kp, Kd, limits from the sidecar)
    every 1/50 s:    obs (sidecar layout, 5 frames newest first) → policy → q* = scale·a + offset

as a robot's joint controller does. A "real" profile (:mod:`trainers.real.profiles`) changes the
model (friction, damping, torso mass), scales the gains the motors realise and the torque limits,
and delays the targets; rotor inertia stays as armature.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from retarget.errors import AsapRetargetError
from robots.registry import load_robot_spec
from trainers.config import SimConfig
from trainers.metrics import SUCCESS_DISTANCE_M, TrackingMetrics, tracking_metrics
from trainers.real.model import apply_profile, build_pd_spec
from trainers.real.profiles import DEFAULT_REAL_PROFILE, get_profile
from trainers.real.pybullet_engine import PybulletBatch, mark_spec
from trainers.reference import MotionReference, body_layout, point_site_and_body_ids


class Sim2SimError(AsapRetargetError):
    """An exported policy or sidecar that the runner cannot use."""


@dataclass(frozen=True)
class Sim2SimConfig:
    """Rates and the simulated robot of the runner."""

    pd_hz: float = 1000.0
    """PD loop and physics rate [Hz]; a multiple of the policy rate."""
    profile: str = DEFAULT_REAL_PROFILE
    """The robot: a "real" profile name, or "nominal" (the training simulator)."""
    stop_on_failure: bool = True
    """End the run at the first frame whose mean point distance exceeds 0.5 m (the success rule)."""


@dataclass(frozen=True)
class Sim2SimResult:
    metrics: TrackingMetrics
    """Success, Eg-mpjpe, Empjpe, Evel, Eacc of the run."""
    steps: int
    """Policy steps run."""
    first_actions: np.ndarray
    """(D,) the policy's output at the first step (for consistency checks)."""


def load_onnx_policy(path: str | Path):
    """``(obs (N, O) float32) -> actions (N, D)`` from an ONNX file, with onnxruntime on the CPU."""
    try:
        import onnxruntime
    except ImportError as exc:
        raise Sim2SimError("sim2sim needs onnxruntime: pip install -e '.[train]'") from exc
    try:
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own unrelated types
        raise Sim2SimError(f"{path}: cannot load the ONNX policy: {exc}") from exc
    return lambda obs: session.run(None, {"obs": np.asarray(obs, dtype=np.float32)})[0]


_SIDECAR_SIM_KEYS: tuple[str, ...] = (
    "robot",
    "physics_dt_s",
    "decimation",
    "init_height_offset_m",
    "action_offset",
    "action_scale",
    "action_clip",
)
_SIDECAR_OBS_KEYS: tuple[str, ...] = ("ang_vel_scale", "dof_vel_scale", "clip")


def load_sidecar(policy_path: str | Path) -> dict:
    """The export's JSON sidecar, with every key the loop reads checked (one line naming the file if not)."""
    path = Path(str(policy_path) + ".json")
    if not path.is_file():
        raise Sim2SimError(f"{path}: missing; `asap-retarget export-policy` writes it next to the policy")
    try:
        info = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise Sim2SimError(f"{path}: not a readable JSON sidecar ({exc}); export the policy again") from exc
    if not isinstance(info, dict):
        raise Sim2SimError(f"{path}: expected a JSON object, found {type(info).__name__}; export the policy again")
    missing = {
        "joint_names",
        "kp",
        "kd",
        "effort_limit_nm",
        "default_joint_pos_rad",
        "sim",
        "obs",
        "obs_history_len",
    } - set(info)
    sim, obs = info.get("sim"), info.get("obs")
    if not missing and isinstance(sim, dict) and isinstance(obs, dict):
        missing = {f"sim.{k}" for k in _SIDECAR_SIM_KEYS if k not in sim} | {
            f"obs.{k}" for k in _SIDECAR_OBS_KEYS if k not in obs
        }
    if missing or not isinstance(sim, dict) or not isinstance(obs, dict):
        raise Sim2SimError(f"{path}: no {', '.join(sorted(missing)) or 'sim/obs objects'}; export the policy again")
    try:
        robot = load_robot_spec(str(sim["robot"]))
    except AsapRetargetError as exc:
        raise Sim2SimError(f"{path}: sim.robot: {exc}") from exc
    names = info["joint_names"]
    unknown = sorted({str(n) for n in names if n not in robot.joint_names}) if isinstance(names, list) else names
    if unknown or not names:
        raise Sim2SimError(f"{path}: joint_names {unknown!r} are not joints of {robot.name}")
    sizes = {k: np.shape(info[k]) for k in ("kp", "kd", "effort_limit_nm", "default_joint_pos_rad")}
    if any(shape != (len(names),) for shape in sizes.values()):
        raise Sim2SimError(
            f"{path}: kp, kd, effort_limit_nm and default_joint_pos_rad must each have one number per "
            f"joint ({len(names)}), found shapes {sizes}"
        )
    for key in ("physics_dt_s", "decimation"):
        value = sim[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise Sim2SimError(f"{path}: sim.{key} must be a positive number, found {value!r}")
    return info


def _quat_rotate_inverse(quat_wxyz: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """R(q)ᵀ·v: a world vector in the body frame."""
    conj = quat_wxyz * np.array([1.0, -1.0, -1.0, -1.0])
    out = np.empty(3)
    mujoco.mju_rotVecQuat(out, vec, conj)
    return out


class Sim2SimRunner:
    """The G1 in one ``mujoco.MjData`` under an explicit PD loop, driven by an exported policy."""

    def __init__(self, sidecar: dict, reference: MotionReference, cfg: Sim2SimConfig = Sim2SimConfig()):
        self.info, self.ref, self.cfg = sidecar, reference, cfg
        sim = sidecar["sim"]
        self.policy_dt_s = sim["physics_dt_s"] * sim["decimation"]
        self.substeps = round(cfg.pd_hz * self.policy_dt_s)
        if self.substeps < 1 or abs(self.substeps / cfg.pd_hz - self.policy_dt_s) > 1e-9:
            raise Sim2SimError(f"pd_hz {cfg.pd_hz:g} is not a multiple of the policy rate {1 / self.policy_dt_s:g} Hz")
        profile = get_profile(cfg.profile)
        names = list(sidecar["joint_names"])
        spec = apply_profile(build_pd_spec(SimConfig(robot=sim["robot"])), profile)
        spec.option.timestep = 1.0 / cfg.pd_hz
        for name in names:
            act = spec.actuator(name)
            act.set_to_motor()  # ctrl is the torque; our loop computes it
            act.delay, act.nsample = 0.0, 0  # the delay is ours too (a queue of targets)
        if profile.engine != "mujoco":
            mark_spec(spec, profile.engine, sim["robot"], 0)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        # Another engine runs the physics under this loop's PD torques; self.data then mirrors its state.
        self.engine = PybulletBatch(self.model, 1) if profile.engine != "mujoco" else None
        self.qpos_adr = np.array([self.model.joint(n).qposadr[0] for n in names])
        self.qvel_adr = np.array([self.model.joint(n).dofadr[0] for n in names])
        self.kp = np.array(sidecar["kp"]) * [profile.kp_multiplier(n) for n in names]
        self.kd = np.array(sidecar["kd"]) * [profile.kd_multiplier(n) for n in names]
        self.effort = np.array(sidecar["effort_limit_nm"]) * profile.effort_limit_scale
        self.q_default = np.array(sidecar["default_joint_pos_rad"])
        # Profile delays are counted in 5 ms training physics steps.
        self.delay_ticks = round(profile.delay_physics_steps * sim["physics_dt_s"] * cfg.pd_hz)
        layout = body_layout(load_robot_spec(sim["robot"]))
        self.body_ids, self.site_ids = point_site_and_body_ids(self.model, layout)
        self.reset()

    # --- observation, as the sidecar documents it -----------------------------------------------
    def phase(self) -> float:
        return float(np.clip(self.time_s / self.ref.duration_s, 0.0, 1.0))

    def frame(self) -> np.ndarray:
        o, d = self.info["obs"], self.data
        quat = d.qpos[3:7]
        return np.concatenate(
            [
                d.qvel[3:6] * o["ang_vel_scale"],  # free joint angular velocity is in the body frame
                _quat_rotate_inverse(quat, np.array([0.0, 0.0, -1.0])),
                d.qpos[self.qpos_adr] - self.q_default,
                d.qvel[self.qvel_adr] * o["dof_vel_scale"],
                self.last_action,
                [self.phase()],
            ]
        )

    def observation(self) -> np.ndarray:
        clip = self.info["obs"]["clip"]
        return np.clip(np.concatenate(list(self.history)), -clip, clip)[None].astype(np.float32)

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        robot = np.concatenate([self.data.xpos[self.body_ids], self.data.site_xpos[self.site_ids]])
        return robot, self.ref.sample(np.array([self.phase()])).point_pos_w[0]

    # --- reset / step ---------------------------------------------------------------------------
    def reset(self) -> None:
        """The reference's first frame, its velocities, a raised root; history filled with the first frame."""
        r = self.ref.sample(np.zeros(1))
        d = self.data
        mujoco.mj_resetData(self.model, d)
        self.time_s = 0.0
        d.qpos[:3] = r.root_pos_w[0] + [0.0, 0.0, self.info["sim"]["init_height_offset_m"]]
        d.qpos[3:7] = r.root_quat_w[0]
        d.qpos[self.qpos_adr] = r.dof_pos[0]
        d.qvel[:3] = r.root_lin_vel_w[0]
        d.qvel[3:6] = _quat_rotate_inverse(r.root_quat_w[0], r.root_ang_vel_w[0])
        d.qvel[self.qvel_adr] = r.dof_vel[0]
        mujoco.mj_forward(self.model, d)
        if self.engine is not None:
            self.engine.bind("qpos")[0], self.engine.bind("qvel")[0] = d.qpos, d.qvel
            self.engine.forward()
        self.last_action = np.zeros(len(self.qpos_adr))
        self.targets = deque([r.dof_pos[0].copy()] * (self.delay_ticks + 1), maxlen=self.delay_ticks + 1)
        self.history = deque([self.frame()] * self.info["obs_history_len"], maxlen=self.info["obs_history_len"])

    def pd_target(self, action: np.ndarray) -> np.ndarray:
        sim = self.info["sim"]
        if sim["action_offset"] == "reference_pose":
            offset = self.ref.sample(np.array([(self.time_s + self.policy_dt_s) / self.ref.duration_s])).dof_pos[0]
        else:
            offset = self.q_default
        return sim["action_scale"] * np.clip(action, -sim["action_clip"], sim["action_clip"]) + offset

    def step(self, action: np.ndarray) -> None:
        """One policy step: ``substeps`` PD ticks toward the action's targets, then the new observation frame."""
        action = np.clip(action, -self.info["sim"]["action_clip"], self.info["sim"]["action_clip"])
        target, d = self.pd_target(action), self.data
        for _ in range(self.substeps):
            self.targets.append(target)
            q_star = self.targets[0]  # delay_ticks old (the newest when there is no delay)
            tau = self.kp * (q_star - d.qpos[self.qpos_adr]) - self.kd * d.qvel[self.qvel_adr]
            d.ctrl[:] = np.clip(tau, -self.effort, self.effort)
            if self.engine is None:
                mujoco.mj_step(self.model, d)
            else:
                self.engine.step_torque(0, d.ctrl.copy())
                self.engine.sync(0)  # a non-finite state is caught by run()
                d.qpos[:], d.qvel[:] = self.engine.bind("qpos")[0], self.engine.bind("qvel")[0]
        if self.engine is not None:
            mujoco.mj_kinematics(self.model, d)  # the points the metrics read
        self.time_s += self.policy_dt_s
        self.last_action = action
        self.history.appendleft(self.frame())

    def run(self, policy, max_steps: int | None = None) -> Sim2SimResult:
        """From the reset state to the clip's end (or failure / ``max_steps``); the paper's metrics."""
        steps = int(np.ceil(self.ref.duration_s / self.policy_dt_s - 1e-9))
        if max_steps is not None and max_steps < 1:
            raise Sim2SimError(f"max_steps={max_steps}: at least one policy step is needed")
        steps = steps if max_steps is None else min(steps, max_steps)
        p, q = self.points()
        robot, ref = [p], [q]
        first: np.ndarray | None = None
        for k in range(steps):
            action = np.asarray(policy(self.observation()), dtype=np.float64)[0]
            first = action if first is None else first
            self.step(action)
            p, q = self.points()
            robot.append(p)
            ref.append(q)
            if not np.isfinite(p).all():
                raise Sim2SimError(f"the simulation diverged at policy step {k + 1}")
            if self.cfg.stop_on_failure and np.linalg.norm(p - q, axis=-1).mean() > SUCCESS_DISTANCE_M:
                break
        assert first is not None  # steps ≥ 1: a clip of ≥ 2 frames lasts at least one policy step
        return Sim2SimResult(tracking_metrics([(np.stack(robot), np.stack(ref))]), len(robot) - 1, first)
