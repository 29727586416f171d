"""Physics filter on the 39 real clips: verdicts, figure distributions, corruption confusion table, speed.

    python bench/bench_filter.py [--clips N] [--corrupt-clips kick_level1_filter,walk_level1_filter]

Reads the 39 clips of tests/fixtures/smpl_video (bench/bench_data.py). Speed is frames of motion per
second of one core, per layer, against real time (the clips are 30 Hz); retargeting is not
counted (it is the pipeline's, measured by its own benchmark).
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

import numpy as np
from bench_data import SMPL_DIR

from retarget.filter import FilterConfig, filter_result
from retarget.filter.corruptions import all_corruptions
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz

DATA = SMPL_DIR


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", type=int, default=0, help="only the first N clips (0: all)")
    parser.add_argument(
        "--corrupt-clips", default="kick_level1_filter,walk_level1_filter,single_foot_jump_level1_filter"
    )
    args = parser.parse_args()
    config = FilterConfig()
    paths = sorted(DATA.glob("*.npz"))[: args.clips or None]
    verdicts, layer_s, frames = [], defaultdict(float), 0
    for path in paths:
        seq = read_amass_npz(path)
        result = retarget_sequence(seq)
        v = filter_result(result, seq, config)
        verdicts.append(v)
        frames += v.num_frames
        for k, s in v.seconds_per_layer.items():
            layer_s[k] += s
        first = v.check(v.first_failure) if v.first_failure else None
        print(
            f"{v.clip[6:-6]:34s} {v.decision:6s} {v.kept_frames:4d}/{v.num_frames:<4d} "
            f"{(first.name if first else '-'):22s} "
            f"{(f'{first.worst:.3g} {first.unit} (limit {first.threshold:g})' if first else '')}"
        )
    print("\nverdicts:", dict(Counter(v.decision for v in verdicts)))
    print("first failing checks:", dict(Counter(v.first_failure for v in verdicts if v.first_failure)))
    print("repairs:", [(v.clip[6:-6], r.name, round(r.offset_m, 3)) for v in verdicts for r in v.repairs])
    print("\nfigure distribution over clips (worst frame per clip): median / p90 / max  [unit]  (limit, clips failing)")
    names = [c.name for c in verdicts[0].checks]
    for name in names:
        checks = [v.check(name) for v in verdicts]
        w = np.array([c.worst for c in checks], dtype=float)
        print(
            f"  {name:24s} {np.nanmedian(w):9.3g} {np.nanpercentile(w, 90):9.3g}"
            f" {np.nanmax(w):9.3g}  [{checks[0].unit}]"
            f"  (limit {checks[0].threshold:g}, {sum(not c.passed for c in checks)} failing)"
        )
    replays = [r for v in verdicts for r in v.replay.get("ranges", [])]
    if replays:
        fails = [r for r in replays if r["failed"]]
        print(
            f"  replay: {len(replays)} ranges, {len(fails)} fell; median time to fall "
            f"{np.median([r['fail_time_s'] for r in fails]) if fails else float('nan'):.2f} s"
        )
    seconds_of_motion = frames / 30.0
    print(f"\nspeed over {frames} frames ({seconds_of_motion:.1f} s of motion), one core:")
    total = 0.0
    for k in ("kinematic", "dynamic", "replay"):
        total += layer_s[k]
        print(
            f"  {k:9s} {frames / max(layer_s[k], 1e-9):8.0f} frames/s"
            f" = {seconds_of_motion / max(layer_s[k], 1e-9):6.1f}× real time"
        )
    print(f"  all three {frames / total:8.0f} frames/s = {seconds_of_motion / total:6.1f}× real time (target ≥ 10×)")
    # Confusion table: rows = corruption, columns = checks that newly fail (vs the clip's original verdict).
    print("\ncorruption confusion table (cell: clips where the check newly fails / clips; * = the check meant for it)")
    table: dict[str, Counter] = defaultdict(Counter)
    meant, caught, runs = {}, Counter(), Counter()
    cfg = FilterConfig(layers=("kinematic", "dynamic"))
    for name in args.corrupt_clips.split(","):
        seq = read_amass_npz(DATA / f"video_{name}_amass.npz")
        base = {c.name for c in filter_result(retarget_sequence(seq), seq, cfg).failed_checks}
        for c in all_corruptions(seq):
            v = filter_result(retarget_sequence(c.seq), c.seq, cfg)
            new = {x.name for x in v.failed_checks} - base
            runs[c.name] += 1
            meant[c.name] = c.expected_check
            table[c.name].update(new)
            if c.expected_check is None:
                caught[c.name] += int(not new and any(r.name == "human.reground" for r in v.repairs))
            else:
                hit = v.check(c.expected_check).bad[c.frames[0] : c.frames[1]].any()
                caught[c.name] += int(hit)
    cols = sorted({k for row in table.values() for k in row})
    print(
        "  "
        + "corruption".ljust(14)
        + " caught "
        + " ".join(k.split(".")[0][0] + "." + k.split(".")[1][:10] for k in cols)
    )
    for row in table:
        cells = " ".join(
            f"{table[row][k]}/{runs[row]}{'*' if meant[row] == k else ' '}".rjust(len(k.split(".")[1][:10]) + 2)
            for k in cols
        )
        label = "repaired" if meant[row] is None else "caught"
        print(f"  {row:14s} {caught[row]}/{runs[row]} {label[:6]} {cells}")


if __name__ == "__main__":
    main()
