"""Where the time of a PyBullet "real" robot goes, against MuJoCo's batch, measured side by side in one process.

    python bench/bench_pybullet_cost.py --envs 16 --steps 50 --repeats 5

* robot load: CPU seconds of one PyBullet world holding the G1, from the URDF's STL meshes and from the cached
  convex-hull copy (:mod:`trainers.real.pybullet_hulls`), interleaved, medians;
* one policy step (4 physics steps) of ``--envs`` G1s standing under PD from the default pose: CPU per env of
  PyBullet's physics (its ``stepSimulation`` and torque calls), of the state transfer back to MuJoCo's kinematic
  mirror, and of a MuJoCo batch doing the same, interleaved, medians over ``--repeats``;
* the same policy steps through the batch's own ``step`` in one process and over ``--workers`` worker processes
  (:mod:`trainers.real.pybullet_workers`), wall seconds, interleaved, medians: the speed-up of the workers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robots.registry import load_robot_spec
from trainers.c_output import c_output_silenced
from trainers.real import pybullet_hulls
from trainers.real.batch import make_batch
from trainers.real.model import build_real_model
from trainers.real.pybullet_engine import PybulletBatch
from trainers.real.pybullet_workers import PybulletWorkers
from trainers.sim_model import default_joint_pos


def load_cpu_s(urdf: Path) -> float:
    import pybullet
    from pybullet_utils.bullet_client import BulletClient

    with c_output_silenced():
        client = BulletClient(connection_mode=pybullet.DIRECT)
        t = time.process_time()
        client.loadURDF(str(urdf), flags=pybullet.URDF_USE_INERTIA_FROM_FILE)
        cpu = time.process_time() - t
        client.disconnect()
    return cpu


def standing_batch(profile: str, envs: int, workers: int = 0):
    g1 = load_robot_spec("g1_23dof")
    model = build_real_model(profile)
    batch = PybulletWorkers(model, envs, workers) if workers > 1 else make_batch(model, envs, nthread=1)
    qpos, ctrl = batch.bind("qpos"), batch.bind("ctrl")
    ids = np.arange(envs)
    batch.reset(ids)
    q0 = default_joint_pos(g1)
    adr = model.jnt_qposadr[[model.joint(n).id for n in g1.joint_names]]
    qpos[:, 2], qpos[:, 3], qpos[:, adr], ctrl[:] = 0.8, 1.0, q0, q0
    if isinstance(batch, (PybulletBatch, PybulletWorkers)):
        batch.forward(ids)
    else:
        import mujoco

        batch.forward(stage=mujoco.mjtStage.mjSTAGE_VEL)
    return batch


def step_cpu_s(batch, steps: int) -> dict[str, float]:
    """CPU per env and policy step: total, and for PyBullet its physics and its state transfer."""
    envs = batch.nsim
    if not isinstance(batch, PybulletBatch):
        t = time.process_time()
        for _ in range(steps):
            batch.step(nstep=4)
        return {"total": (time.process_time() - t) / steps / envs}
    physics = transfer = 0.0
    for _ in range(steps):
        for i in range(envs):
            t = time.process_time()
            for _ in range(4):
                q, qd = batch._joint_state(i)
                tau = np.clip(
                    batch.kp * (batch.bind("ctrl")[i] - q) - batch.kd * qd, -batch.tau_max_nm, batch.tau_max_nm
                )
                batch.step_torque(i, tau)
            t2 = time.process_time()
            batch.sync(i)
            physics, transfer = physics + t2 - t, transfer + time.process_time() - t2
    n = steps * envs
    return {"total": (physics + transfer) / n, "physics": physics / n, "transfer": transfer / n}


def step_wall_s(batch, steps: int) -> float:
    """Wall seconds of ``steps`` policy steps (4 physics steps) through the batch's own ``step``."""
    t = time.perf_counter()
    for _ in range(steps):
        batch.step(nstep=4)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=50, help="policy steps per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2, help="worker processes for the parallel PyBullet batch")
    args = ap.parse_args()
    urdf = load_robot_spec("g1_23dof").urdf_path
    hulls = pybullet_hulls.hull_urdf(urdf)
    loads = np.array([[load_cpu_s(urdf), load_cpu_s(hulls)] for _ in range(2 * args.repeats)])
    mesh_s, hull_s = np.median(loads, axis=0)
    print(f"robot load, CPU median of {len(loads)}: STL meshes {mesh_s:.3f} s, hull copy {hull_s:.3f} s")
    print(f"  ratio {mesh_s / hull_s:.1f}x (per-pair ratios: median {np.median(loads[:, 0] / loads[:, 1]):.1f}x)")
    rows = []
    for _ in range(args.repeats):
        pb, mj = standing_batch("pybullet:combined", args.envs), standing_batch("combined", args.envs)
        rows.append((step_cpu_s(pb, args.steps), step_cpu_s(mj, args.steps)))
    pb_total = np.median([p["total"] for p, _ in rows])
    pb_physics = np.median([p["physics"] for p, _ in rows])
    pb_transfer = np.median([p["transfer"] for p, _ in rows])
    mj_total = np.median([m["total"] for _, m in rows])
    print(
        f"one policy step (4 physics steps) per env, CPU median of {args.repeats} × {args.steps} steps × "
        f"{args.envs} envs: PyBullet {1e3 * pb_total:.2f} ms (physics {1e3 * pb_physics:.2f}, state transfer "
        f"{1e3 * pb_transfer:.2f}), MuJoCo batch {1e3 * mj_total:.3f} ms; ratio {pb_total / mj_total:.1f}x"
    )
    serial, parallel = (
        standing_batch("pybullet:combined", args.envs),
        standing_batch("pybullet:combined", args.envs, args.workers),
    )
    walls = np.array(
        [[step_wall_s(serial, args.steps), step_wall_s(parallel, args.steps)] for _ in range(args.repeats)]
    )
    parallel.close()
    one, many = np.median(walls, axis=0)
    print(
        f"{args.steps} policy steps of {args.envs} envs, wall median of {args.repeats}: one process {one:.2f} s, "
        f"{args.workers} workers {many:.2f} s; speed-up {one / many:.2f}x (per-pair median "
        f"{np.median(walls[:, 0] / walls[:, 1]):.2f}x)"
    )


if __name__ == "__main__":
    main()
