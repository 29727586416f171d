"""Batch runner figures: scaling 1 -> 2 workers, runner overhead, Ray byte identity and overhead.

    python bench/make_clip_set.py --count 500 --out /tmp/asap_clip_set
    python bench/bench_batch.py --clips /tmp/asap_clip_set [--repeats 3] [--ray]

Reference for the overhead: the same clips through `retarget.pipeline.retarget_file` in a plain
loop in this process (after one warm-up call), no hashing, no files. Targets (issue 5): 2 workers
>= 1.8x the clips/s of 1 worker; the runner adds <= 10 % to the per-clip time. Every wall time is
the median of `--repeats` runs, each into a fresh output folder. The machine's load average is
printed with the figures: on a shared machine the scaling ratio is only as good as the idle cores.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from make_clip_set import DEFAULT_SOURCE, make_clip_set

from retarget.batch import BatchOptions, find_clips, run_batch
from retarget.config import RetargetConfig
from retarget.pipeline import retarget_file


def output_digests(out_dir: Path) -> dict[str, str]:
    files = sorted((out_dir / "clips").glob("*.pkl")) + [out_dir / "motion_library.pkl"]
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def cpu_s() -> float:
    """CPU time of this process plus its finished children (the batch workers) [s]."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def direct_loop(clips: list[Path]) -> tuple[float, float, list[float]]:
    retarget_file(clips[0])  # warm-up: model compilation and caches, as a batch worker does
    per_clip = []
    start, cpu = time.perf_counter(), cpu_s()
    for clip in clips:
        t = time.perf_counter()
        retarget_file(clip)
        per_clip.append(time.perf_counter() - t)
    return time.perf_counter() - start, cpu_s() - cpu, per_clip


def timed_batch(clips: list[Path], work: Path, tag: str, options: BatchOptions, repeats: int):
    walls, cpus, last = [], [], None
    for i in range(repeats):
        out = work / f"{tag}_{i}"
        start, cpu = time.perf_counter(), cpu_s()
        last = run_batch(clips, out, RetargetConfig(), options)
        walls.append(round(time.perf_counter() - start, 2))
        cpus.append(cpu_s() - cpu)
    return statistics.median(walls), walls, statistics.median(cpus), last, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=Path, default=None, help="folder from make_clip_set.py (default: make one)")
    parser.add_argument("--count", type=int, default=500, help="clips to use (and to make when --clips is absent)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--ray", action="store_true", help="also run the batch through a local Ray instance")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_batch_"))
    if args.clips is None:
        args.clips = work / "clips_in"
        make_clip_set(DEFAULT_SOURCE, args.clips, args.count, 1.5, 4.0, seed=0)
    clips = find_clips(args.clips)[: args.count]
    load_before = os.getloadavg()
    print(f"{len(clips)} clips from {args.clips}; {os.cpu_count()} cores; load average {load_before[0]:.2f}")

    direct_s, direct_cpu_s, per_clip = direct_loop(clips)
    print(
        f"direct retarget_file loop     {direct_s:8.1f} s  {len(clips) / direct_s:6.2f} clips/s"
        f"  cpu {direct_cpu_s:.1f} s"
    )
    one_s, one_walls, one_cpu_s, one, one_out = timed_batch(clips, work, "w1", BatchOptions(workers=1), args.repeats)
    two_s, two_walls, _, _, two_out = timed_batch(clips, work, "w2", BatchOptions(workers=2), args.repeats)
    failed = len(one.failed)
    print(f"batch, 1 worker               {one_s:8.1f} s  {len(clips) / one_s:6.2f} clips/s  runs {one_walls}")
    print(f"batch, 2 workers              {two_s:8.1f} s  {len(clips) / two_s:6.2f} clips/s  runs {two_walls}")
    in_batch = [r.seconds for r in one.records if r.ok]
    ok_direct = [t for t, r in zip(per_clip, one.records) if r.ok]
    print(f"scaling 2 vs 1 worker         {one_s / two_s:8.2f} x   (target >= 1.8 x)")
    print(
        f"runner overhead, 1 worker     {100 * (one_s / direct_s - 1):+8.1f} %   (target <= 10 %; whole batch incl. "
        f"worker start, hashing, writes, library, manifest)"
    )
    print(
        f"runner overhead, CPU time     {100 * (one_cpu_s / direct_cpu_s - 1):+8.1f} %   (driver + worker CPU "
        f"{one_cpu_s:.1f} s vs {direct_cpu_s:.1f} s: insensitive to other load on the machine)"
    )
    print(
        f"per-clip median time          {1000 * statistics.median(ok_direct):8.1f} ms direct vs "
        f"{1000 * statistics.median(in_batch):.1f} ms in a worker ({failed} failed clips)"
    )
    same = output_digests(one_out) == output_digests(two_out)
    print(f"1 vs 2 workers byte-identical {same}")
    if args.ray:
        import ray

        start = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        init_s = time.perf_counter() - start
        ray_s, ray_walls, _, _, ray_out = timed_batch(
            clips, work, "ray", BatchOptions(workers=2, executor="ray"), args.repeats
        )
        ray.shutdown()
        print(f"batch, Ray 2 CPUs             {ray_s:8.1f} s  {len(clips) / ray_s:6.2f} clips/s  runs {ray_walls}")
        print(
            f"Ray vs process pool (2)       {100 * (ray_s / two_s - 1):+8.1f} %   (ray.init {init_s:.1f} s not counted)"
        )
        print(f"Ray byte-identical            {output_digests(ray_out) == output_digests(two_out)}")
    print(f"load average after            {os.getloadavg()[0]:.2f} (before {load_before[0]:.2f}); outputs in {work}")


if __name__ == "__main__":
    main()
