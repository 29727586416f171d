"""The G1 released 0.8 m up in its default pose under PD only, stepped by a "real" robot's batch (tests' helper)."""

from __future__ import annotations

import numpy as np

from robots.registry import RobotSpec
from trainers.config import SimConfig
from trainers.real.batch import make_batch
from trainers.real.model import build_real_model
from trainers.sim_model import default_joint_pos


def drop_states(profile: str, g1: RobotSpec, steps: int) -> np.ndarray:
    """(steps, nq + nv) states after each policy step (4 physics steps) of the released G1 in ``profile``."""
    model = build_real_model(profile, SimConfig(robot=g1.name))
    batch = make_batch(model, 1)
    qpos, ctrl = batch.bind("qpos"), batch.bind("ctrl")
    batch.reset(np.array([0]))
    q0 = default_joint_pos(g1)
    adr = model.jnt_qposadr[[model.joint(n).id for n in g1.joint_names]]
    qpos[0, :3], qpos[0, 3:7], qpos[0, adr], ctrl[0] = (0.0, 0.0, 0.8), (1.0, 0.0, 0.0, 0.0), q0, q0
    batch.forward(np.array([0]))
    states = []
    for _ in range(steps):
        batch.step(nstep=4)
        states.append(np.concatenate([batch.bind("qpos")[0], batch.bind("qvel")[0]]))
    return np.array(states)
