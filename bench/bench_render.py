"""Rendering speed: a 5 s real clip to a 640×480 H.264 video on one CPU core, no GPU.

Usage: python bench/bench_render.py [--clip walk_level1_filter] [--repeats 3] [--compare-full-meshes]

Renders the official ASAP retarget of a real clip (tests/fixtures/asap_reference, bench/bench_data.py) with its source
skeleton and stance markers, as
`asap-retarget render --source` does, and prints frames per second, the whole clip's wall
time against the 30 s target, and the ratio to real time (motion seconds per wall second).
The median over repeats is reported; set-up (model build, GL context) is timed apart. CPU time
(this process and the ffmpeg child) is printed beside wall time: on a shared machine the wall
time includes waiting for the core, the CPU time is what the clip costs on a free core.
With --compare-full-meshes it also times 30 frames with the URDF's full meshes, the
reference the mesh decimation is measured against. MUJOCO_GL=egl|osmesa picks the back-end.
"""

from __future__ import annotations

import argparse
import os

if hasattr(os, "sched_setaffinity"):  # one core, before Mesa starts its rasterizer threads
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})

import resource
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_data import ASAP_REFERENCE_DIR, DATA_ROOT, SMPL_DIR

from retarget.viz import MotionRenderer, RenderConfig, SceneConfig, load_panels
from retarget.viz.backend import select_backend
from retarget.viz.video import write_video

PREFIX = "0-motions_raw_tairantestbed_smpl_"
TARGET_S = 30.0


def _find(clip: str) -> tuple[Path, Path]:
    pkl = ASAP_REFERENCE_DIR / f"{PREFIX}video_{clip}_amass.pkl"
    npz = SMPL_DIR / f"video_{clip}_amass.npz"
    if pkl.is_file() and npz.is_file():
        return pkl, npz
    raise SystemExit(f"clip {clip!r} not found under {DATA_ROOT}")


def _cpu_s() -> float:
    """CPU seconds used so far by this process (all threads) and its finished children (ffmpeg)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _frame_times(panels, config: RenderConfig, count: int) -> np.ndarray:
    with MotionRenderer(panels, config) as renderer:
        renderer.render_frame(0)  # shader compilation and texture upload
        times = []
        for i in range(1, count + 1):
            start = time.perf_counter()
            renderer.render_frame(i % renderer.num_frames)
            times.append(time.perf_counter() - start)
    return np.array(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clip", default="walk_level1_filter")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compare-full-meshes", action="store_true")
    args = parser.parse_args()
    pkl, npz = _find(args.clip)
    config = RenderConfig(width_px=640, height_px=480)
    start = time.perf_counter()
    backend = select_backend()
    panels = load_panels(pkl, source=npz)
    with MotionRenderer(panels, config) as renderer:
        setup_s = time.perf_counter() - start
        frames, fps = renderer.num_frames, renderer.fps
    duration_s = (frames - 1) / fps
    print(
        f"clip {args.clip}: {frames} frames at {fps:g} Hz ({duration_s:.2f} s), 640x480, back-end {backend}, "
        f"cores {sorted(os.sched_getaffinity(0))}; set-up {setup_s:.2f} s"
    )
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            start, cpu0 = time.perf_counter(), _cpu_s()
            with MotionRenderer(panels, config) as renderer:
                write_video(Path(tmp) / "clip.mp4", (renderer.render_frame(i) for i in range(frames)), fps)
            walls.append(time.perf_counter() - start)
            cpus.append(_cpu_s() - cpu0)
            print(
                f"  repeat {repeat + 1}: wall {walls[-1]:.2f} s ({frames / walls[-1]:.1f} frames/s), "
                f"CPU {cpus[-1]:.2f} s ({frames / cpus[-1]:.1f} frames/s)"
            )
    for label, value in (("wall", float(np.median(walls))), ("CPU", float(np.median(cpus)))):
        print(
            f"whole clip incl. encoding, {label} time: {value:.2f} s median = {frames / value:.1f} frames/s; "
            f"{value / TARGET_S:.2f}x of the {TARGET_S:.0f} s target; "
            f"real-time ratio {duration_s / value:.2f} (motion s per {label} s)"
        )
    if args.compare_full_meshes:
        lod = _frame_times(panels, config, 30)
        full = _frame_times(panels, replace(config, scene=SceneConfig(mesh_cell_m=None)), 30)
        print(
            f"per frame (median of 30): decimated meshes {1e3 * np.median(lod):.0f} ms, "
            f"full URDF meshes {1e3 * np.median(full):.0f} ms -> {np.median(full) / np.median(lod):.2f}x faster"
        )
        no_shadow = _frame_times(panels, replace(config, scene=SceneConfig(shadows=False)), 30)
        print(f"without shadows {1e3 * np.median(no_shadow):.0f} ms ({np.median(lod) / np.median(no_shadow):.2f}x)")


if __name__ == "__main__":
    main()
