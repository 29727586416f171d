"""Tracking `.npz` checks: how far real files sit from the tolerances a file is refused at.

For each of the 39 official ASAP retargets (../shared/data/asap_reference; 23-dof, widened to the 29-dof G1)
our writer's BeyondMimic, mjlab and holosoma files are read back and their body poses compared with our
forward kinematics of their own joint angles, as `convert` checks them; the same for the bundled holosoma
sample (made with holosoma's own G1 model). Printed: the largest body position and orientation error and the
largest |quaternion norm − 1|, each with its ratio to the tolerance (retarget/formats/tracking_checks.py).
The clips are split before looking: the first 20 by name are the tuning half, the other 19 the reporting half.

    nice -n 10 python bench/bench_tracking_checks.py [--clips N]
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import numpy as np

from retarget.formats import read_motions, write_motion
from retarget.formats.kinematics import body_poses
from retarget.formats.tracking_checks import (
    FK_ANGLE_TOLERANCE_RAD,
    FK_POSITION_TOLERANCE_M,
    QUAT_NORM_TOLERANCE,
    body_pose_errors,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SAMPLE = DATA / "formats" / "beyondmimic_npz" / "sub3_largebox_003_mj.npz"
TUNING_COUNT = 20
DIALECTS = ("beyondmimic", "mjlab", "holosoma")


def file_errors(path: Path) -> tuple[float, float, float]:
    """(largest position error [m], orientation error [rad], |norm − 1|) of a tracking file read back."""
    (loaded,) = read_motions(path)
    with np.load(path) as npz:
        data = {k: npz[k] for k in npz.files}
    bodies = [str(n) for n in data["body_names"]]
    _, error_m, error_rad = body_pose_errors(data, bodies, body_poses(loaded.motion, loaded.robot))
    norm_error = float(np.abs(np.linalg.norm(data["body_quat_w"], axis=-1) - 1.0).max())
    return float(error_m.max()), float(error_rad.max()), norm_error


def report(label: str, errors: list[tuple[float, float, float]]) -> None:
    pos, ang, norm = (max(e[i] for e in errors) for i in range(3))
    print(
        f"{label}: {len(errors)} files; body position {pos:.3g} m ({pos / FK_POSITION_TOLERANCE_M:.2g} of the "
        f"{FK_POSITION_TOLERANCE_M:g} m tolerance), orientation {ang:.3g} rad ({ang / FK_ANGLE_TOLERANCE_RAD:.2g} "
        f"of {FK_ANGLE_TOLERANCE_RAD:g}), |norm - 1| {norm:.3g} ({norm / QUAT_NORM_TOLERANCE:.2g} of "
        f"{QUAT_NORM_TOLERANCE:g})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=39)
    args = parser.parse_args()
    clips = sorted((DATA / "asap_reference").glob("*.pkl"))[: args.clips]
    halves: dict[str, list[tuple[float, float, float]]] = {"tuning": [], "reporting": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i, clip in enumerate(clips):
            (loaded,) = read_motions(clip)
            for dialect in DIALECTS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # 23 → 29 dof: the wrists are written as zero
                    path = write_motion(Path(tmp) / f"{i}_{dialect}.npz", loaded.motion, loaded.robot, dialect)
                halves["tuning" if i < TUNING_COUNT else "reporting"].append(file_errors(path))
    for half, errors in halves.items():
        if errors:
            report(f"our writer, {half} half × {len(DIALECTS)} dialects", errors)
    report("holosoma sample (holosoma's own G1)", [file_errors(SAMPLE)])


if __name__ == "__main__":
    main()
