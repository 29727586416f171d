"""One-step replay of a fixed set of transitions in many candidate models, the start states prepared once.

:func:`trainers.delta.one_step.predict_next` resets a robot to every recorded frame through the generic
:meth:`~trainers.real.stepper.PdRobot.reset` (a rotation matrix per frame, the delayed actuators' history filled
one actuator at a time). System identification replays the same transitions in a hundred models, and the state a
reset produces depends on the model only through its layout (sizes, ``qpos0``, the control-history layout), never
on gains or masses. So the reset runs once per layout, its result (``qpos``, ``qvel``, ``ctrl``, ``history``) is
kept, and each replay copies it back after ``mj_resetData`` — the same state, without the per-frame Python work.
The predictions equal :func:`~trainers.delta.one_step.predict_next`'s bit for bit (tests/test_sysid_models.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.rotations import quat_to_matrix
from trainers.config import SimConfig
from trainers.delta.collection import Trajectory
from trainers.delta.one_step import NextStates, residual_rms
from trainers.delta.replay import reset_to_frame
from trainers.real.pybullet_engine import model_engine
from trainers.real.stepper import PdRobot


@dataclass(frozen=True)
class StartStates:
    """(M, ·) the MjData fields a reset to each transition's frame sets, for models of one layout."""

    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    history: np.ndarray


def layout_key(model: mujoco.MjModel) -> bytes:
    """What a reset's state depends on beyond the recording: sizes, the reference pose and the control history."""
    sizes = np.array([model.nq, model.nv, model.nu, model.nhistory], dtype=np.int64)
    parts = (sizes, model.qpos0, model.actuator_history, model.actuator_delay, np.array([model.opt.timestep]))
    return b"".join(np.ascontiguousarray(p).tobytes() for p in parts)


class PreparedReplay:
    """Predicts s_{t+1} of ``pairs`` in MuJoCo models of one robot, as :func:`predict_next` does."""

    def __init__(self, pairs: list[tuple[Trajectory, int]], sim: SimConfig | None = None):
        self.pairs = pairs
        self.sim = SimConfig() if sim is None else sim
        self.targets = np.array([traj.pd_target[t] for traj, t in pairs], dtype=float)
        self.starts: dict[bytes, StartStates] = {}
        # One robot (and its MjData) per model object: a model's data is reused across its replays.
        self.robots: dict[int, tuple[mujoco.MjModel, PdRobot]] = {}

    def _robot(self, model: mujoco.MjModel) -> PdRobot:
        if model_engine(model) != "mujoco":
            raise ValueError("prepared replay steps MuJoCo models only")
        if id(model) not in self.robots:  # the model is kept alongside, so its id is not reused
            self.robots[id(model)] = (model, PdRobot(model, self.sim))
        return self.robots[id(model)][1]

    def _starts(self, robot: PdRobot) -> StartStates:
        key = layout_key(robot.model)
        if key not in self.starts:
            rows: dict[str, list[np.ndarray]] = {k: [] for k in StartStates.__dataclass_fields__}
            for traj, t in self.pairs:
                previous = traj.pd_target[t - 1] if t > 0 else traj.dof_pos[0]  # as predict_next
                reset_to_frame(robot, traj, t, held_target=previous)
                for name, values in rows.items():
                    values.append(getattr(robot.data, name).copy())
            self.starts[key] = StartStates(**{k: np.array(v) for k, v in rows.items()})
        return self.starts[key]

    def predict(self, model: mujoco.MjModel) -> NextStates:
        """f_model(s_t, q*_t) for every transition (``model``'s current parameters)."""
        robot = self._robot(model)
        start = self._starts(robot)
        d = robot.data
        out: dict[str, list[np.ndarray]] = {k: [] for k in (*NextStates.__dataclass_fields__, "root_ang_vel_b")}
        for i, target in enumerate(self.targets):
            mujoco.mj_resetData(model, d)
            d.qpos[:], d.qvel[:], d.ctrl[:] = start.qpos[i], start.qvel[i], start.ctrl[i]
            d.history[:] = start.history[i]
            # As the reset does: forward also writes the warmstart when there are no contacts, so it stays.
            mujoco.mj_forward(model, d)
            d.ctrl[:] = target
            mujoco.mj_step(model, d, nstep=robot.decimation)
            out["dof_pos"].append(robot.dof_pos)
            out["dof_vel"].append(robot.dof_vel)
            out["root_pos_w"].append(robot.root_pos_w)
            out["root_quat_w"].append(robot.root_quat_w)
            out["root_lin_vel_w"].append(robot.root_lin_vel_w)
            out["root_ang_vel_b"].append(robot.root_ang_vel_b)
        # Rotation matrices in one call (row by row the same arithmetic), each product as predict_next forms it.
        rot = quat_to_matrix(np.array(out["root_quat_w"]))
        out["root_ang_vel_w"] = [r @ w for r, w in zip(rot, out.pop("root_ang_vel_b"))]
        return NextStates(**{k: np.array(v) for k, v in out.items()})

    def rms(self, model: mujoco.MjModel, target: NextStates) -> float:
        """RMS of the one-step residual, as :func:`trainers.delta.one_step.one_step_rms`."""
        return residual_rms(self.predict(model), target)
