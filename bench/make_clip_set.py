"""Make a large set of real-derived SMPL clips for batch benchmarks: crops, mirrors, speed changes.

    python bench/make_clip_set.py --count 500 --out /tmp/asap_clip_set

Every clip comes from one of the 39 real video clips in `tests/fixtures/smpl_video/` (relative to
the repo root): a random window of `--min-s`..`--max-s` seconds, mirrored left/right with
probability 1/2, and played 0.8x, 1x or 1.25x by relabelling its frame rate. Deterministic for a
given `--seed`. The set is written outside the repository (not committed).

Mirroring reflects the motion through the world's x-z plane: positions y -> -y (the pelvis, at trans + J0);
each local joint
rotation R -> M_b R M_b with M_b = diag(-1, 1, 1) (SMPL's rest frame has x to the left), the root
R -> M_w R M_b with M_w = diag(1, -1, 1), and the left/right joints swap.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from bench_data import SMPL_DIR
from scipy.spatial.transform import Rotation

from retarget.skeleton import neutral_skeleton

DEFAULT_SOURCE = SMPL_DIR
# SMPL joints that swap under mirroring (left, right).
_LR_PAIRS = ((1, 2), (4, 5), (7, 8), (10, 11), (13, 14), (16, 17), (18, 19), (20, 21), (22, 23))
_M_BODY = np.diag([-1.0, 1.0, 1.0])
_M_WORLD = np.diag([1.0, -1.0, 1.0])
SPEEDS = (0.8, 1.0, 1.25)


def mirror(poses: np.ndarray, trans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, 72) axis-angle and (T, 3) translation of the left/right mirror image."""
    pose = poses.reshape(len(poses), 24, 3).astype(np.float64)
    swap = np.arange(24)
    for left, right in _LR_PAIRS:
        swap[left], swap[right] = right, left
    local = pose[:, swap].copy()
    # R -> M R M for a reflection M is rotvec r -> det(M) M r = (r_x, -r_y, -r_z) for M_b.
    local[:, 1:] *= np.array([1.0, -1.0, -1.0])
    root = Rotation.from_rotvec(pose[:, 0]).as_matrix()
    local[:, 0] = Rotation.from_matrix(_M_WORLD @ root @ _M_BODY).as_rotvec()
    # The pelvis sits at trans + J0 with J0 unrotated, so mirror the pelvis, not `trans`.
    pelvis_rest = neutral_skeleton().offsets[0]
    mirrored_trans = (trans + pelvis_rest) @ _M_WORLD - pelvis_rest
    return local.reshape(len(poses), 72).astype(poses.dtype), mirrored_trans.astype(trans.dtype)


def make_clip_set(source_dir: Path, out_dir: Path, count: int, min_s: float, max_s: float, seed: int) -> list[Path]:
    sources = sorted(Path(source_dir).glob("*.npz"))
    if not sources:
        raise SystemExit(f"no .npz clips in {source_dir}")
    rng = np.random.default_rng(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for i in range(count):
        src = sources[i % len(sources)]
        with np.load(src) as data:
            arrays = {k: data[k] for k in data.files}
        fps = float(arrays["mocap_framerate"])
        total = len(arrays["poses"])
        length = min(total, round(rng.uniform(min_s, max_s) * fps))
        start = int(rng.integers(0, total - length + 1))
        poses, trans = arrays["poses"][start : start + length], arrays["trans"][start : start + length]
        mirrored = bool(rng.integers(0, 2))
        if mirrored:
            poses, trans = mirror(poses, trans)
        speed = SPEEDS[int(rng.integers(0, len(SPEEDS)))]
        arrays.update(poses=poses, trans=trans, mocap_framerate=np.asarray(fps * speed))
        name = f"{i:04d}_{src.stem}_f{start}-{start + length}{'_mirror' if mirrored else ''}_x{speed:g}.npz"
        np.savez(out_dir / name, **arrays)
        written.append(out_dir / name)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="folder of real SMPL .npz clips")
    parser.add_argument("--out", type=Path, required=True, help="output folder (outside the repository)")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--min-s", type=float, default=1.5, help="shortest crop [s]")
    parser.add_argument("--max-s", type=float, default=4.0, help="longest crop [s]")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = make_clip_set(args.source, args.out, args.count, args.min_s, args.max_s, args.seed)
    frames = sum(len(np.load(p)["poses"]) for p in paths)
    print(f"{len(paths)} clips, {frames} source frames, in {args.out}")


if __name__ == "__main__":
    main()
