"""Two checkouts' `retarget_file`, side by side on one core: CPU time per clip, alternating per clip.

    python bench/bench_speed_ab.py OLD_CHECKOUT NEW_CHECKOUT [--clips N] [--rounds R]

Each checkout runs in its own worker process (``PYTHONPATH`` set to that checkout), both pinned to the same
CPU with BLAS/OpenMP pools at one thread; the parent sends each clip to both workers in alternating order, so
load from other jobs hits them alike. Each worker warms up on the first clip (numba cache, kinematics) before
timing. Prints per-checkout frames per CPU-second (total, and median over clips) and the per-clip median ratio.
Used for the before/after figures in docs/retarget_quality_speed.md, where load on a shared machine makes
separate runs incomparable.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_data import SMPL_DIR

_WORKER = """
import json, sys, time
from retarget.pipeline import retarget_file
for line in sys.stdin:
    path = line.strip()
    cpu = time.process_time()
    frames = retarget_file(path).motion.num_frames
    print(json.dumps([frames, time.process_time() - cpu]), flush=True)
"""


class _Worker:
    def __init__(self, checkout: Path, cpu: int):
        env = dict(os.environ, PYTHONPATH=str(checkout))
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
        self.proc = subprocess.Popen(
            ["taskset", "-c", str(cpu), sys.executable, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=checkout,
            env=env,
        )

    def run(self, clip: Path) -> tuple[int, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{clip}\n")
        self.proc.stdin.flush()
        frames, cpu_s = json.loads(self.proc.stdout.readline())
        return int(frames), float(cpu_s)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--clips", type=int, default=None, help="only the first N clips (default: all 39)")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the clips")
    args = parser.parse_args()
    cpu = min(os.sched_getaffinity(0))
    clips = sorted(SMPL_DIR.glob("*.npz"))[: args.clips]
    workers = {"old": _Worker(args.old.resolve(), cpu), "new": _Worker(args.new.resolve(), cpu)}
    for w in workers.values():
        w.run(clips[0])
    runs: dict[str, list[tuple[int, float]]] = {name: [] for name in workers}
    for r in range(args.rounds):
        for i, clip in enumerate(clips):
            order = ["old", "new"] if (i + r) % 2 == 0 else ["new", "old"]
            for name in order:
                runs[name].append(workers[name].run(clip))
    for w in workers.values():
        w.close()
    fps = {}
    for name, rs in runs.items():
        frames = np.array([f for f, _ in rs], dtype=float)
        cpu_s = np.array([c for _, c in rs])
        fps[name] = frames / cpu_s
        print(
            f"{name} ({getattr(args, name)}): {frames.sum() / cpu_s.sum():.0f} frames per CPU-second in total, "
            f"median over clips {np.median(fps[name]):.0f}"
        )
    print(f"new / old, per-clip median: {np.median(fps['new'] / fps['old']):.2f}x")


if __name__ == "__main__":
    main()
