"""PyBullet worlds stepped in worker processes give the single-process batch's states bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pybullet")

from robots.registry import load_robot_spec
from trainers.real.batch import make_batch
from trainers.real.model import build_real_model
from trainers.real.pybullet_engine import MIN_ENVS_PER_WORKER, PybulletBatch
from trainers.real.pybullet_workers import PybulletWorkers
from trainers.sim_model import default_joint_pos


def _run(batch, model, steps: int) -> list[np.ndarray]:
    """Three G1s released from different heights under PD (the delayed `combined` robot); the second is put back
    at 0.9 m halfway. Every step's qpos, qvel, torques and mirrored body positions."""
    g1 = load_robot_spec("g1_23dof")
    q0 = default_joint_pos(g1)
    adr = model.jnt_qposadr[[model.joint(n).id for n in g1.joint_names]]
    qpos, ctrl = batch.bind("qpos"), batch.bind("ctrl")
    ids = np.arange(batch.nsim)
    batch.reset(ids)
    qpos[:, 2], qpos[:, 3], qpos[:, adr] = 0.78 + 0.02 * ids, 1.0, q0
    ctrl[:] = q0
    batch.forward(ids)
    out = []
    for t in range(steps):
        ctrl[:] = q0 + 0.05 * np.sin(0.2 * t + ids[:, None])
        if t == steps // 2:
            qpos[1, 2] = 0.9
            batch.forward(np.array([1]))
        batch.step(nstep=4)
        out.append(
            np.concatenate(
                [batch.bind(k).reshape(batch.nsim, -1) for k in ("qpos", "qvel", "actuator_force", "xpos")], 1
            )
        )
    return out


def test_workers_reproduce_the_single_process_batch():
    model = build_real_model("pybullet:combined")
    serial = _run(PybulletBatch(model, 3), model, 40)
    workers = PybulletWorkers(model, 3, 2)
    try:
        assert [s.size for s in workers.shares] == [2, 1]
        parallel = _run(workers, model, 40)
    finally:
        workers.close()
    np.testing.assert_array_equal(np.array(parallel), np.array(serial))


def test_make_batch_uses_workers_only_with_threads_and_enough_worlds():
    model = build_real_model("pybullet")
    assert isinstance(make_batch(model, MIN_ENVS_PER_WORKER, nthread=4), PybulletBatch)  # one worker's worth
    assert isinstance(make_batch(model, 4 * MIN_ENVS_PER_WORKER, nthread=1), PybulletBatch)
    batch = make_batch(model, 2 * MIN_ENVS_PER_WORKER, nthread=4)
    try:
        assert isinstance(batch, PybulletWorkers) and len(batch.shares) == 2
    finally:
        batch.close()
