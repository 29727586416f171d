"""Consumer dialects on the 39 official ASAP retargets: wrong bodies as each consumer reads them, and write time.

For every clip of ../shared/data/asap_reference (23-dof; widened to the 29-dof G1, wrists at zero) the
BeyondMimic and mjlab files are read **by position** with the consumers' own body lists and each of the 14
bodies their G1 task tracks is compared with our forward kinematics of the body of that name. The reference
is this package's previous `.npz` layout (every URDF link in MuJoCo order, URDF joint order), read the same
way. Write time per clip: median over clips, against the ASAP `.pkl` writer.

    nice -n 10 python bench/bench_formats.py [--clips N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from retarget.formats import convert_dof, read_motions, write_motion
from retarget.formats.kinematics import body_poses
from retarget.formats.orders import BEYONDMIMIC_TRACKED_BODIES, consumer_order
from robots.registry import load_robot_spec

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "data" / "asap_reference"
TOLERANCE_M = 1e-5


def wrong_bodies(pos_w: np.ndarray, by_position: tuple[str, ...], truth: dict[str, np.ndarray]) -> tuple[int, float]:
    """(tracked bodies off by more than TOLERANCE_M, largest error [m]) for a file read by position."""
    errors = [np.abs(pos_w[:, by_position.index(n)] - truth[n]).max() for n in BEYONDMIMIC_TRACKED_BODIES]
    return sum(e > TOLERANCE_M for e in errors), float(max(errors))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=39)
    args = parser.parse_args()
    g29 = load_robot_spec("g1_29dof")
    paths = sorted(REFERENCE.glob("*.pkl"))[: args.clips]
    wrong: dict[str, list[int]] = {"beyondmimic": [], "mjlab": [], "previous layout": []}
    worst: dict[str, float] = dict.fromkeys(wrong, 0.0)
    times: dict[str, list[float]] = {f: [] for f in ("asap", "beyondmimic", "mjlab", "holosoma", "gmr", "csv")}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 23 → 29 widening note, once per clip
        for path in paths:
            (loaded,) = read_motions(path)
            motion29, _ = convert_dof(loaded.motion, loaded.robot, g29)
            poses = body_poses(motion29, g29)
            truth = {n: poses.pos_w[:, i] for i, n in enumerate(poses.names)}
            for fmt, ext in (
                ("asap", ".pkl"),
                ("beyondmimic", ".npz"),
                ("mjlab", ".npz"),
                ("holosoma", ".npz"),
                ("gmr", ".pkl"),
                ("csv", ".csv"),
            ):
                start = time.perf_counter()
                out = write_motion(Path(tmp) / f"{path.stem}_{fmt}{ext}", loaded.motion, loaded.robot, fmt)
                times[fmt].append(time.perf_counter() - start)
                if fmt in ("beyondmimic", "mjlab"):
                    n, err = wrong_bodies(np.load(out)["body_pos_w"], consumer_order(fmt).bodies, truth)
                    wrong[fmt].append(n)
                    worst[fmt] = max(worst[fmt], err)
            old = body_poses(loaded.motion, loaded.robot)  # every link, MuJoCo order, as written before
            ours = {n: old.pos_w[:, i] for i, n in enumerate(old.names)}
            n, err = wrong_bodies(old.pos_w, consumer_order("beyondmimic").bodies, ours)
            wrong["previous layout"].append(n)
            worst["previous layout"] = max(worst["previous layout"], err)
    print(f"{len(paths)} clips, 14 tracked bodies each, read by position (tolerance {TOLERANCE_M:g} m)")
    for name, counts in wrong.items():
        print(
            f"  {name:>16}: wrong bodies per clip {min(counts)}–{max(counts)} of 14, largest error {worst[name]:.2e} m"
        )
    reference = float(np.median(times["asap"]))
    print(f"write time per clip, median (reference: ASAP .pkl writer {reference * 1e3:.1f} ms)")
    for fmt, values in times.items():
        median = float(np.median(values))
        print(f"  {fmt:>12}: {median * 1e3:7.1f} ms  ({median / reference:5.1f}x ASAP)")


if __name__ == "__main__":
    main()
