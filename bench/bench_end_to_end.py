"""End-to-end retargeting speed on the 39 real video clips, on one core.

Usage: python bench/bench_end_to_end.py [--clips DIR] [--repeats 3]

Prints per-clip frames, wall time and mean matched-point distance, then the end-to-end
frames per second (median over repeats), in wall time and in CPU time (on a shared machine the
CPU figure is the comparable one), and the ratio to real time (motion seconds per wall second).
The first clip's time includes loading the robot model once per process, as a batch worker pays it.
"""

from __future__ import annotations

import argparse
import os

# One core: pin the process and keep BLAS single-threaded before numpy loads.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import time
from pathlib import Path

import numpy as np
from bench_data import SMPL_DIR

from retarget.pipeline import retarget_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=Path, default=SMPL_DIR)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    clips = sorted(args.clips.glob("*.npz"))
    if not clips:
        raise SystemExit(f"no clips in {args.clips}")
    start = time.perf_counter()
    retarget_file(clips[0])  # warm-up: model compile and imports, paid once per worker
    warmup_s = time.perf_counter() - start
    rates, cpu_rates, motion_s = [], [], 0.0
    for rep in range(args.repeats):
        frames, wall, cpu, errors = 0, 0.0, 0.0, []
        for path in clips:
            t0, c0 = time.perf_counter(), time.process_time()
            result = retarget_file(path)
            dt = time.perf_counter() - t0
            cpu += time.process_time() - c0
            frames += result.motion.num_frames
            wall += dt
            errors.append(result.mean_match_error_mm)
            if rep == 0:
                motion_s += result.motion.num_frames / result.motion.fps
                print(
                    f"{path.stem:55s} {result.motion.num_frames:5d} frames {dt:6.2f} s "
                    f"{result.motion.num_frames / dt:7.0f} frames/s  match {result.mean_match_error_mm:5.1f} mm"
                )
        rates.append(frames / wall)
        cpu_rates.append(frames / cpu)
    fps = float(np.median(rates))
    print(f"\n{len(clips)} clips, {frames} frames, one core, {args.repeats} repeats (median)")
    print(f"model load + first clip (once per worker): {warmup_s:.2f} s")
    print(f"end-to-end: {fps:.0f} frames/s  (repeats: {', '.join(f'{r:.0f}' for r in rates)})")
    cpu_fps = float(np.median(cpu_rates))
    cpu_repeats = ", ".join(f"{r:.0f}" for r in cpu_rates)
    print(f"end-to-end, CPU time: {cpu_fps:.0f} frames per CPU-second  (repeats: {cpu_repeats})")
    print(f"real time ratio: {fps / 30.0:.1f}x  (30 Hz output; {motion_s:.1f} s of motion in {frames / fps:.1f} s)")
    print(f"mean matched-point distance: {np.mean(errors):.1f} mm (median clip {np.median(errors):.1f} mm)")


if __name__ == "__main__":
    main()
