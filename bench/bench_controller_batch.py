"""The controller stage through the batch executors: clips/s with 1 and 2 worker processes, and the memory of a
worker.

    nice -n 10 python bench/bench_controller_batch.py [--clips squat_level1_filter,kick_level1_filter,...]
        [--seconds 2.0]

Each clip is cut to its first `--seconds` of motion (written to a temporary folder) and run through
`run_batch(..., BatchOptions(workers=W, stages=(controller_stage,)))` into a fresh folder, W = 1 then 2. Printed:
wall time, CPU time of the workers per second of motion, and the peak resident memory (RSS) of the largest worker
process (`getrusage(RUSAGE_CHILDREN).ru_maxrss` after the pool has ended, which covers every worker of both runs,
so it is also read between the runs) and of this driver process. Reference: the same clips in one worker.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from retarget.batch import BatchOptions, run_batch
from retarget.batch.stages import controller_stage
from retarget.config import RetargetConfig

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "smpl_video"
CLIPS = "squat_level1_filter,kick_level1_filter,walk_level1_filter,jump_forward_level1_filter"


def _children_cpu_s() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _cut(clip: str, seconds: float, folder: Path) -> float:
    with np.load(DATA / f"video_{clip}_amass.npz") as npz:
        data = {k: npz[k] for k in npz.files}
    frames = min(len(data["poses"]), round(seconds * float(data["mocap_framerate"])) + 1)
    data["poses"], data["trans"] = data["poses"][:frames], data["trans"][:frames]
    np.savez(folder / f"{clip}.npz", **data)
    return (frames - 1) / float(data["mocap_framerate"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", default=CLIPS)
    parser.add_argument("--seconds", type=float, default=2.0, help="motion per clip [s]")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_controller_batch_"))
    src = work / "src"
    src.mkdir()
    motion_s = sum(_cut(c, args.seconds, src) for c in args.clips.split(","))
    sources = sorted(src.glob("*.npz"))
    print(f"{len(sources)} clips, {motion_s:.1f} s of motion; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    for workers in (1, 2):
        cpu0, start = _children_cpu_s(), time.perf_counter()
        result = run_batch(
            sources, work / f"w{workers}", RetargetConfig(), BatchOptions(workers=workers, stages=(controller_stage,))
        )
        wall_s = time.perf_counter() - start
        worker_cpu_s = _children_cpu_s() - cpu0
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
        ok = sum(r.ok for r in result.records)
        print(
            f"{workers} worker(s): {ok}/{len(sources)} ok, wall {wall_s:.1f} s ({motion_s / wall_s:.2f} s of motion "
            f"per s), workers' CPU {worker_cpu_s / motion_s:.2f} s per s of motion (retarget + controller), "
            f"largest worker peak RSS so far {rss_mb:.0f} MB"
        )
    driver_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"driver peak RSS {driver_mb:.0f} MB (load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
