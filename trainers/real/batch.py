"""``make_batch``: the batch of simulations that steps a training or "real" G1 model, whichever engine plays it."""

from __future__ import annotations

from typing import Any

import mujoco

from trainers.defaults import DEFAULT_ENGINE, DEFAULT_WARP_DEVICE
from trainers.real.profiles import OTHER_ENGINE
from trainers.real.pybullet_engine import MIN_ENVS_PER_WORKER, PybulletBatch, model_engine
from trainers.real.pybullet_workers import PybulletWorkers


def make_batch(
    model: mujoco.MjModel,
    nsim: int,
    nthread: int = 0,
    engine: str = DEFAULT_ENGINE,
    warp_device: str = DEFAULT_WARP_DEVICE,
) -> Any:
    """The batch that steps ``nsim`` copies of ``model``: MuJoCo's own (``nthread`` threads), MuJoCo Warp's
    (``engine="warp"``, on ``warp_device``), or PyBullet's for a model marked for it — in ``nthread`` worker
    processes when each gets at least :data:`MIN_ENVS_PER_WORKER` worlds (:mod:`trainers.real.pybullet_workers`),
    else in this process. A PyBullet robot is PyBullet's whatever ``engine`` says: it is the "real" robot."""
    if model_engine(model) == OTHER_ENGINE:
        workers = min(nthread, nsim // MIN_ENVS_PER_WORKER)
        if workers > 1:
            return PybulletWorkers(model, nsim, workers)
        return PybulletBatch(model, nsim)
    if engine == "warp":
        from trainers.warp_batch import WarpBatch, WarpConfig

        return WarpBatch(model, nsim, WarpConfig(device=warp_device))
    import mujoco.batch

    return mujoco.batch.Batch(model, nsim, nthread=nthread, persistent=True)
