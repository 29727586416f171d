"""Env steps per second of the tracking environment per physics engine and device, against MuJoCo's C engine.

    python bench/bench_engine_speed.py --envs 8,64,256 --steps 25 --repeats 3 [--devices cpu,cuda]

For each number of environments: ``TrackingEnv.step`` on a real clip (the official ASAP retarget of the squat,
bundled in tests/fixtures) with domain randomization, random starts and noisy actions — the training loop's env
side, observations and rewards included, policy excluded — on

* ``mujoco``: MuJoCo's C batch on ``--threads`` threads (the default engine; the reference of every ratio);
* ``warp:DEVICE``: MuJoCo Warp on each of ``--devices`` (``cuda`` only where Warp finds a GPU).

Rows: env steps/s (environments × policy steps / wall s, median of ``--repeats`` interleaved repeats), physics
steps/s (× decimation), the ratio to the C engine at the same number of environments, and the split of a Warp
step between its kernels (physics) and the host side (observations, rewards, copies), plus the one-time set-up
(Warp: model upload, kernel compile on a cold cache). Also: the largest joint difference between the engines over
the measured steps of the first repeat (the same actions from the same start).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.reference import load_references
from trainers.sim_model import build_training_model

CLIP = Path(__file__).resolve().parents[1] / (
    "tests/fixtures/asap_reference/0-motions_raw_tairantestbed_smpl_video_squat_level1_filter_amass.pkl"
)


def make_env(engine: str, device: str, envs: int, threads: int, clip: Path) -> tuple[TrackingEnv, float]:
    cfg = TrackingEnvConfig()
    sim = dataclasses.replace(cfg.sim, engine=engine, warp_device=device, num_threads=threads)
    cfg = dataclasses.replace(cfg, sim=sim)
    model = build_training_model(sim)
    refs = load_references(clip, model, load_robot_spec(sim.robot))
    t = time.perf_counter()
    env = TrackingEnv(refs, envs, cfg, seed=0, model=model)
    return env, time.perf_counter() - t


def run_steps(env: TrackingEnv, actions: np.ndarray) -> tuple[float, float, np.ndarray]:
    """(wall s, physics wall s, joint angles after every step)."""
    physics = 0.0
    step = env.batch.step

    def timed(*args, **kwargs):
        nonlocal physics
        t = time.perf_counter()
        try:
            return step(*args, **kwargs)
        finally:
            physics += time.perf_counter() - t

    env.batch.step = timed
    joints = []
    t = time.perf_counter()
    for a in actions:
        env.step(torch.as_tensor(a, dtype=torch.float32))
        joints.append(env.state.dof_pos.copy())
    wall = time.perf_counter() - t
    env.batch.step = step
    return wall, physics, np.array(joints)


def warp_devices(asked: list[str]) -> tuple[list[str], list[str]]:
    from trainers.warp_batch import WarpEngineError, check_warp_device

    usable, missing = [], []
    for device in asked:
        try:
            check_warp_device(device)
            usable.append(device)
        except WarpEngineError as exc:
            missing.append(f"{device}: {exc}")
    return usable, missing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", default="8,64,256", help="Comma-separated numbers of environments.")
    ap.add_argument("--steps", type=int, default=25, help="Policy steps per repeat (after 2 warm-up steps).")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="Threads of the C engine (0: all CPUs).")
    ap.add_argument("--devices", default="cpu,cuda", help="Warp devices to try (missing ones are reported).")
    ap.add_argument("--clip", type=Path, default=CLIP, help="Motion library (.pkl); default: the squat.")
    args = ap.parse_args()
    devices, missing = warp_devices([d for d in args.devices.split(",") if d])
    for line in missing:
        print(f"not measured: warp:{line}")
    decimation = TrackingEnvConfig().sim.decimation
    print(f"clip {args.clip.name}; C engine on {args.threads} thread(s); {args.steps} steps × {args.repeats} repeats")
    header = (
        f"{'engine':<12} {'envs':>5} {'env steps/s':>12} {'physics/s':>10} {'× C':>7} {'kernels':>8} {'setup s':>8}"
    )
    print(header)
    for n in (int(v) for v in args.envs.split(",")):
        engines = [("mujoco", "cpu")] + [("warp", d) for d in devices]
        envs, setup = {}, {}
        for engine, device in engines:
            envs[(engine, device)], setup[(engine, device)] = make_env(engine, device, n, args.threads, args.clip)
        actions = np.random.default_rng(0).normal(0.0, 0.3, (args.repeats, args.steps + 2, n, 23))
        walls: dict[tuple[str, str], list[float]] = {k: [] for k in envs}
        kernels: dict[tuple[str, str], list[float]] = {k: [] for k in envs}
        joints: dict[tuple[str, str], np.ndarray] = {}
        for r in range(args.repeats):
            for key, env in envs.items():  # interleaved: the machine's load hits every engine alike
                run_steps(env, actions[r, :2])  # warm-up (first launches, caches)
                wall, physics, q = run_steps(env, actions[r, 2:])
                walls[key].append(wall)
                kernels[key].append(physics / wall)
                if r == 0:
                    joints[key] = q
        c_rate = n * args.steps / statistics.median(walls[("mujoco", "cpu")])
        for key in envs:
            rate = n * args.steps / statistics.median(walls[key])
            name = key[0] if key[0] == "mujoco" else f"warp:{key[1]}"
            print(
                f"{name:<12} {n:>5} {rate:>12.0f} {rate * decimation:>10.0f} {rate / c_rate:>7.3f} "
                f"{statistics.median(kernels[key]):>8.0%} {setup[key]:>8.1f}"
            )
        # How far apart the engines end, against the C engine against itself from a start nudged by 1e-6 rad
        # (falls and contact events amplify any difference: that is the chaos floor of the comparison).
        nudged, _ = make_env("mujoco", "cpu", n, args.threads, args.clip)
        nudged._qpos[:, nudged.qpos_adr] += 1e-6
        nudged.batch.forward(np.arange(n))
        run_steps(nudged, actions[0, :2])
        reference = joints[("mujoco", "cpu")]
        spreads = {"C engine nudged 1e-6 rad": run_steps(nudged, actions[0, 2:])[2]}
        spreads.update({f"warp:{k[1]}": q for k, q in joints.items() if k[0] == "warp"})
        for name, q in spreads.items():
            per_env = np.abs(q - reference).max(axis=(0, 2))
            print(
                f"  {name} vs C engine, {n} envs over {args.steps} steps: joint difference median "
                f"{np.median(per_env):.1e}, worst {per_env.max():.1e} rad; {int((per_env < 1e-4).sum())}/{n} "
                "envs within 1e-4 rad"
            )


if __name__ == "__main__":
    main()
