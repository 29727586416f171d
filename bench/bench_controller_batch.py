"""The controller stage through the batch executors: clips/s with 1 and 2 workers, and the memory of a worker,
for the process pool and the thread executor in one run.

    nice -n 10 python bench/bench_controller_batch.py [--clips squat_level1_filter,kick_level1_filter,...]
        [--seconds 2.0] [--executors process,thread]

Each clip is cut to its first `--seconds` of motion (written to a temporary folder) and run through
`run_batch(..., BatchOptions(executor=E, workers=W, stages=(controller_stage,)))` into a fresh folder, W = 1 then
2. Printed: wall time, CPU time of the workers per second of motion, and memory:

* process pool: the peak resident memory (RSS) of the largest worker process (`getrusage(RUSAGE_CHILDREN)
  .ru_maxrss` after the pool has ended, which covers every worker so far, so it is read after each run);
* thread executor: this process's RSS sampled every 10 ms during the run (`/proc/self/statm`): its peak, the
  RSS before the run, and per worker the peak's rise over the RSS before divided by the threads (what each clip
  in flight adds; the code, models and caches are shared and counted once, in the RSS before the first run).

The thread runs come after the process runs, so the driver's own RSS before them includes what the first thread
run loaded. Reference: the same clips in one worker of the same executor, and the per-clip outputs of the thread
executor against the process pool's (same bytes: same motion).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import threading
import time
from pathlib import Path
from typing import Self

import numpy as np

from retarget.batch import BatchOptions, run_batch
from retarget.batch.stages import controller_stage
from retarget.config import RetargetConfig

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "smpl_video"
CLIPS = "squat_level1_filter,kick_level1_filter,walk_level1_filter,jump_forward_level1_filter"
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


def _children_cpu_s() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _self_cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE_MB


class _PeakRss:
    """This process's RSS sampled every 10 ms while the block runs: its peak [MB]."""

    def __enter__(self) -> Self:
        self.peak_mb = _rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak_mb = max(self.peak_mb, _rss_mb())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mb = max(self.peak_mb, _rss_mb())


def _cut(clip: str, seconds: float, folder: Path) -> float:
    with np.load(DATA / f"video_{clip}_amass.npz") as npz:
        data = {k: npz[k] for k in npz.files}
    frames = min(len(data["poses"]), round(seconds * float(data["mocap_framerate"])) + 1)
    data["poses"], data["trans"] = data["poses"][:frames], data["trans"][:frames]
    np.savez(folder / f"{clip}.npz", **data)
    return (frames - 1) / float(data["mocap_framerate"])


def _outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "clips").glob("*.pkl"))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", default=CLIPS)
    parser.add_argument("--seconds", type=float, default=2.0, help="motion per clip [s]")
    parser.add_argument("--executors", default="process,thread")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_controller_batch_"))
    src = work / "src"
    src.mkdir()
    motion_s = sum(_cut(c, args.seconds, src) for c in args.clips.split(","))
    sources = sorted(src.glob("*.npz"))
    print(f"{len(sources)} clips, {motion_s:.1f} s of motion; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    outputs: dict[tuple[str, int], dict[str, bytes]] = {}
    for executor in args.executors.split(","):
        for workers in (1, 2):
            out = work / f"{executor}{workers}"
            cpu0 = _children_cpu_s() if executor == "process" else _self_cpu_s()
            rss_before_mb, start = _rss_mb(), time.perf_counter()
            with _PeakRss() as peak:
                options = BatchOptions(executor=executor, workers=workers, stages=(controller_stage,))
                result = run_batch(sources, out, RetargetConfig(), options)
            wall_s = time.perf_counter() - start
            cpu_s = (_children_cpu_s() if executor == "process" else _self_cpu_s()) - cpu0
            outputs[(executor, workers)] = _outputs(out)
            ok = sum(r.ok for r in result.records)
            if executor == "process":
                worker_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
                memory = f"largest worker peak RSS so far {worker_mb:.0f} MB"
            else:
                memory = (
                    f"process RSS {rss_before_mb:.0f} MB before, peak {peak.peak_mb:.0f} MB: "
                    f"{(peak.peak_mb - rss_before_mb) / workers:.0f} MB per worker in flight"
                )
            print(
                f"{executor} {workers} worker(s): {ok}/{len(sources)} ok, wall {wall_s:.1f} s ({motion_s / wall_s:.2f} "
                f"s of motion per s), CPU {cpu_s / motion_s:.2f} s per s of motion (retarget + controller), {memory}",
                flush=True,
            )
    reference = outputs.get(("process", 1))
    if reference is not None:
        for key, got in outputs.items():
            same = sum(got.get(name) == data for name, data in reference.items())
            print(f"{key[0]} {key[1]}: {same}/{len(reference)} clip files byte-equal to process 1")
    print(f"driver peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0:.0f} MB")


if __name__ == "__main__":
    main()
