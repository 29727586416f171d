"""Where `retarget_file`'s time goes: cProfile over clips 2-13 after one warm-up clip, grouped by stage, and
the cost of one Gauss-Newton iteration per frame, piece by piece.

    taskset -c 1 python bench/profile_retarget.py

Prints the import time, the first clip's time, a markdown table of seconds and shares per stage, and (the
compiled pass being one call that cProfile cannot look into) a second table: microseconds per frame for each
piece of an iteration, timed with `time.process_time` (median of 30) on one clip's problem at its solution
with the same compiled functions the pass runs. A third table times the same stages without cProfile (CPU
time around each stage's function, the 12 clips three times): cProfile's cost per Python call inflates the
stages made of many small numpy calls (reading, floor levelling, assembly) two- to fivefold. Run it on two
checkouts to compare (docs/retarget_quality_speed.md); `PYTHONPATH=OTHER_CHECKOUT python bench/profile_retarget.py`
profiles another checkout with this script.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

t0 = time.perf_counter()
from retarget.pipeline import retarget_file

t1 = time.perf_counter()
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_data import SMPL_DIR

clips = sorted(SMPL_DIR.glob("*.npz"))
retarget_file(clips[0])
t2 = time.perf_counter()
profile = cProfile.Profile()
frames = 0
profile.enable()
for clip in clips[1:13]:
    frames += retarget_file(clip).motion.num_frames
profile.disable()
stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]


def cum(name: str, file: str | None = None) -> float:
    """Cumulative seconds of the functions called `name` (in files containing `file`)."""
    return sum(v[3] for k, v in stats.items() if k[2] == name and (file is None or file in k[0]))


def tot(name: str, file: str | None = None) -> float:
    """Own seconds of the functions called `name` (in files containing `file`)."""
    return sum(v[2] for k, v in stats.items() if k[2] == name and (file is None or file in k[0]))


total = cum("retarget_file")
passes = cum("_solve", "ik/sequence")
rows = [
    ("read clip (reader, floor levelling)", cum("read_clip")),
    ("resample + SMPL FK", cum("resample_sequence") + cum("smpl_forward_kinematics")),
    ("limb scales + scaling", cum("compute_limb_scales") + cum("limb_scales_from_rest") + cum("scale_joints")),
    ("contacts", cum("detect_foot_contacts")),
    ("problem assembly", cum("build_sequence_problem")),
    ("Gauss-Newton passes (one compiled call each)", passes),
    ("keyframe interpolation, heading hold (with its FK)", cum("solve", "ik/sequence") - passes),
    (
        "solver set-up, post-solve match errors (FK)",
        cum("_solve_whole_sequence") - cum("solve", "ik/sequence") - cum("build_sequence_problem"),
    ),
]
print(
    f"import {t1 - t0:.2f} s, first clip {t2 - t1:.2f} s; "
    f"{frames} frames profiled in {total:.2f} s ({frames / total:.0f} frames/s under cProfile)"
)
print("| stage | s | share |")
print("|---|---:|---:|")
for name, s in rows:
    print(f"| {name} | {s:.3f} | {100 * s / total:.0f}% |")
other = total - sum(s for _, s in rows)
print(f"| other | {other:.3f} | {100 * other / total:.0f}% |")


def _median_seconds(run: Callable[[], object], repeats: int = 30) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return float(np.median(times))


def per_iteration_table(clip: Path) -> None:
    """Microseconds per frame of each piece of one Gauss-Newton iteration, on `clip`'s problem at its solution."""
    from retarget import pipeline
    from retarget.ik import banded, gauss_newton
    from retarget.ik.kernel import normal_equations
    from retarget.ik.sequence import WholeSequenceIK
    from retarget.rotations import quat_to_matrix
    from robots import load_robot_spec

    captured = {}
    original = pipeline.build_sequence_problem

    def capture(*args, **kwargs):
        captured["problem"] = original(*args, **kwargs)
        return captured["problem"]

    pipeline.build_sequence_problem = capture  # type: ignore[assignment]
    try:
        result = retarget_file(clip)
    finally:
        pipeline.build_sequence_problem = original  # type: ignore[assignment]
    problem = captured["problem"]
    robot = load_robot_spec("g1_23dof")
    solver = WholeSequenceIK(problem.kinematics, problem.layout, robot.lower_rad, robot.upper_rad)
    root_pos = np.ascontiguousarray(result.motion.root_pos_w)
    root_rot = np.ascontiguousarray(quat_to_matrix(result.motion.root_quat_w))
    dof = np.ascontiguousarray(result.motion.dof_pos)
    T, n = dof.shape[0], solver._n
    layout, targets, one_sided = solver._kernel_inputs(problem.targets, T)
    H, g = np.empty((T, n, n)), np.empty((T, n))
    rows_, width = banded.band_storage(T * n, 2 * n)
    band, inv_diag, step = np.empty((rows_, width)), np.empty(rows_), np.empty(rows_)
    mask, penalty = solver._smoothed_mask, (solver.config.acceleration_weight * result.motion.fps**2) ** 2
    settings = gauss_newton.StepSettings(0.1, penalty, True, 0.25, 1e-4, 0.002, True)
    held = (dof <= solver.lower) | (dof >= solver.upper)  # as the iterations carry them over

    def normal() -> None:
        normal_equations(root_pos, root_rot, dof, solver._tree, layout, targets, one_sided, H, g)

    normal()
    gauss_newton.assemble_band(H, 0.1, penalty, mask, band)
    factored = band.copy()
    banded.band_cholesky(factored, inv_diag)
    copies = (H.copy(), g.copy(), root_pos.copy(), root_rot.copy(), dof.copy(), held.copy())

    def whole_step() -> None:
        h, gg, rp, rr, d, hd = (a.copy() for a in copies)
        gauss_newton.gauss_newton_step(
            h, gg, rp, rr, d, hd, solver.lower, solver.upper, mask, settings, *gauss_newton.work_arrays(T, n)
        )

    copy_cost = _median_seconds(lambda: tuple(a.copy() for a in copies))
    band_copy_cost = _median_seconds(band.copy)
    pieces = {
        "normal equations (kernel)": _median_seconds(normal),
        "band assembly": _median_seconds(lambda: gauss_newton.assemble_band(H, 0.1, penalty, mask, band)),
        "banded Cholesky": _median_seconds(lambda: banded.band_cholesky(band.copy(), inv_diag)) - band_copy_cost,
        "solve (forward + backward)": _median_seconds(lambda: banded.band_solve(factored, inv_diag, step)),
    }
    step_cost = _median_seconds(whole_step) - copy_cost
    pieces["rest of the step (newly pinned joints, gradient, trust region, update)"] = (
        step_cost - pieces["band assembly"] - pieces["banded Cholesky"] - pieces["solve (forward + backward)"]
    )
    # How many joints this step newly pins (each costs a forward solve from its row; held ones cost nothing).
    h, gg, side = H.copy(), g.copy(), np.zeros(dof.shape)
    gauss_newton.hold_at_limits(h, gg, dof, held, solver.lower, solver.upper, side)
    gauss_newton.linear_step(h, gg, root_pos, dof, mask, 0.1, penalty, band, inv_diag, step)
    moved = dof + step[: T * n].reshape(T, n)[:, 6:]
    new_pins = int(((np.clip(moved, solver.lower, solver.upper) != moved) & ~held).sum())
    scale = 1e6 / T
    print(f"\nper frame per Gauss-Newton iteration, {clip.stem} ({T} frames, {new_pins} newly pinned joints) [µs]:")
    print("| piece | µs per frame |")
    print("|---|---:|")
    for name, seconds in pieces.items():
        print(f"| {name} | {seconds * scale:.2f} |")
    print(f"| total | {sum(pieces.values()) * scale:.2f} |")


per_iteration_table(clips[3])


def stage_table(clips: list[Path], repeats: int = 3) -> None:
    """CPU seconds per stage without cProfile: a timer around each stage's function (inclusive), the nested
    ones subtracted from their callers."""
    import functools
    from collections import defaultdict

    from retarget import pipeline
    from retarget.ik import sequence
    from retarget.readers import source

    spent: dict[str, float] = defaultdict(float)

    def timed(owner: object, name: str, label: str) -> None:
        function = getattr(owner, name)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] += time.process_time() - start

        setattr(owner, name, wrapper)

    for owner, name, label in (
        (source, "_read_single", "file"),
        (source, "level_sequence", "floor"),
        (pipeline, "resample_sequence", "fk"),
        (pipeline, "smpl_forward_kinematics", "fk"),
        (pipeline, "limb_scales_from_rest", "scale"),
        (pipeline, "rest_matched_points", "scale"),
        (pipeline, "scale_joints", "scale"),
        (pipeline, "detect_foot_contacts", "contacts"),
        (pipeline, "build_sequence_problem", "assembly"),
        (sequence.WholeSequenceIK, "_solve", "passes"),
        (sequence.WholeSequenceIK, "solve", "solve"),
        (pipeline, "retarget_sequence", "sequence"),
        (pipeline, "read_clip", "read"),
    ):
        timed(owner, name, label)
    frames = 0
    for _ in range(repeats):
        for clip in clips:
            frames += pipeline.retarget_file(clip).motion.num_frames
    inside = sum(spent[k] for k in ("fk", "scale", "contacts", "assembly", "solve"))
    rows = [
        ("read clip: file", spent["file"]),
        ("read clip: floor levelling", spent["floor"]),
        ("resample + SMPL FK", spent["fk"]),
        ("limb scales + scaling", spent["scale"]),
        ("contacts", spent["contacts"]),
        ("problem assembly", spent["assembly"]),
        ("Gauss-Newton passes (one compiled call each)", spent["passes"]),
        ("keyframe interpolation, heading hold, solver set-up", spent["solve"] - spent["passes"]),
        ("post-solve match errors, motion assembly", spent["sequence"] - inside),
        ("rest of reading (format detection)", spent["read"] - spent["file"] - spent["floor"]),
    ]
    total = spent["read"] + spent["sequence"]
    print(f"\nwithout cProfile: {frames} frames, {total:.3f} CPU s, {1e6 * total / frames:.0f} µs per frame")
    print("| stage | µs per frame | share |")
    print("|---|---:|---:|")
    for name, seconds in rows:
        print(f"| {name} | {1e6 * seconds / frames:.1f} | {100 * seconds / total:.0f}% |")


stage_table(clips[1:13])
