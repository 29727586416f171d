"""Where `retarget_file`'s time goes: cProfile over clips 2-13 after one warm-up clip, grouped by stage.

    taskset -c 1 python bench/profile_retarget.py

Prints the import time, the first clip's time (numba cache, kinematics built) and a markdown table of
seconds and shares per stage. Run it on two checkouts to compare (docs/retarget_quality_speed.md).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path

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
    """Own seconds of the functions called `name`."""
    return sum(v[2] for k, v in stats.items() if k[2] == name and (file is None or file in k[0]))


total = cum("retarget_file")
rows = [
    ("read clip (reader, floor levelling)", cum("read_clip")),
    ("resample + SMPL FK", cum("resample_sequence") + cum("smpl_forward_kinematics")),
    ("limb scales + scaling", cum("compute_limb_scales") + cum("limb_scales_from_rest") + cum("scale_joints")),
    ("contacts", cum("detect_foot_contacts")),
    ("problem assembly", cum("build_sequence_problem")),
    ("Gauss-Newton passes (compiled: normal equations, factorisation, steps)", tot("solve_pass")),
    ("solver set-up per pass (targets, interpolation, heading hold)", cum("solve", "ik/sequence") - tot("solve_pass")),
    ("post-solve match errors", cum("_match_errors") + cum("forward", "tree_kinematics")),
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
