"""End-to-end retargeting speed on ONE core: ours vs the GMR-style mink baseline, same run.

    python bench/bench_speed.py [--clips N]

For each of the 39 real clips (`tests/fixtures/smpl_video/`, bench/bench_data.py), times
`retarget.pipeline.retarget_file`
(file in → robot motion out, default config) and `bench/baseline_gmr.py` (file in → motion out, same
scaled targets), alternating per clip so both see the same machine load. The process is pinned to one
CPU and BLAS/OpenMP pools to one thread before numpy loads. Prints per-method frames/s (median over
clips, and total frames / total time), wall and CPU time, and the ratio ours / baseline; then each
method's start-up: a fresh process on the same CPU that imports it and retargets the shortest clip,
minus that clip's steady-state time (median of 3 processes).
Issue 21's targets: ours >= 5,000 frames/s steady on one core, start-up <= 0.5 s.

The baseline is tuned as a mink user tunes it, with GMR's published values: DAQP (the fastest of mink's QP
back-ends at this size), `lm_damping` 1 per task, damping 0.5, per stage one solve plus at most 10 more while
the task error drops by more than 1e-3, each frame warm-started from the previous one, and the configuration
and velocity limits passed to `mink.solve_ik` (by keyword: its sixth positional parameter is `safety_break`).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline_gmr import GmrBaseline
from bench_data import DATA_ROOT

DATA = DATA_ROOT


def _pin_one_core() -> int:
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def _timed(fn, path: Path) -> tuple[int, float, float]:
    """(frames, wall seconds, CPU seconds) of one end-to-end call."""
    wall, cpu = time.perf_counter(), time.process_time()
    frames = fn(path).motion.num_frames
    return frames, time.perf_counter() - wall, time.process_time() - cpu


_STARTUP = {
    "ours": "from retarget.pipeline import retarget_file as f",
    "GMR-style baseline": "from baseline_gmr import GmrBaseline; f = GmrBaseline().retarget_file",
}


def _fresh_process_s(method: str, clip: Path, cpu: int) -> float:
    """Wall time [s] of a new Python process on `cpu` that imports `method` and retargets `clip`."""
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
        f"{_STARTUP[method]}; f({str(clip)!r})"
    )
    start = time.perf_counter()
    subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-c", code], check=True, env=dict(os.environ))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips", type=int, default=None, help="only the first N clips (default: all 39)")
    args = parser.parse_args()
    cpu = _pin_one_core()
    from retarget.pipeline import retarget_file

    baseline = GmrBaseline()
    methods = {"ours": retarget_file, "GMR-style baseline": baseline.retarget_file}
    clips = sorted((DATA / "smpl_video").glob("*.npz"))[: args.clips]
    for fn in methods.values():  # warm-up: model compilation and caches are not per-clip costs
        fn(clips[0])
    runs: dict[str, list[tuple[int, float, float]]] = {m: [] for m in methods}
    for i, clip in enumerate(clips):
        order = list(methods) if i % 2 == 0 else list(reversed(methods))
        for m in order:
            runs[m].append(_timed(methods[m], clip))
        print(
            f"[{i + 1}/{len(clips)}] {clip.stem}: "
            + ", ".join(f"{m} {runs[m][-1][0] / runs[m][-1][1]:.0f} fps" for m in methods),
            file=sys.stderr,
            flush=True,
        )

    table = Table(
        title=f"End-to-end speed on one core (CPU {cpu}), {len(clips)} clips, {sum(r[0] for r in runs['ours'])} frames"
    )
    for col in ("method", "median fps (wall)", "total fps (wall)", "total fps (CPU time)", "total wall \\[s]"):
        table.add_column(col, justify="right" if col != "method" else "left")
    stats = {}
    for m, rs in runs.items():
        frames = np.array([r[0] for r in rs], dtype=float)
        wall = np.array([r[1] for r in rs])
        cpu_s = np.array([r[2] for r in rs])
        stats[m] = (np.median(frames / wall), frames.sum() / wall.sum(), frames.sum() / cpu_s.sum(), frames / wall)
        table.add_row(m, f"{stats[m][0]:.0f}", f"{stats[m][1]:.0f}", f"{stats[m][2]:.0f}", f"{wall.sum():.1f}")
    ours, base = stats["ours"], stats["GMR-style baseline"]
    table.add_row(
        "ratio ours / baseline",
        f"{ours[0] / base[0]:.2f}×",
        f"{ours[1] / base[1]:.2f}×",
        f"{ours[2] / base[2]:.2f}×",
        f"per-clip median {np.median(ours[3] / base[3]):.2f}×",
    )
    Console(width=160).print(table)
    shortest = min(range(len(clips)), key=lambda i: runs["ours"][i][0])
    for m in methods:
        fresh = np.median([_fresh_process_s(m, clips[shortest], cpu) for _ in range(3)])
        steady = runs[m][shortest][1]
        print(
            f"{m}: start-up {fresh - steady:.2f} s (fresh process {fresh:.2f} s for {clips[shortest].stem}, "
            f"{runs[m][shortest][0]} frames; steady {steady:.3f} s)"
        )
    print("issue 21 targets: ours >= 5000 fps steady on one core, start-up <= 0.5 s")


if __name__ == "__main__":
    main()
