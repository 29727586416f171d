"""Bench-log linear fit on each "real" profile: RMS before → after, the ratio, and the fit time (median of 3).

Reference: the issue's classroom example, 8.16° → 3.82° (ratio 0.47); target ratio ≤ 0.5 in < 120 s.
Run: python bench/bench_delta.py
"""

from __future__ import annotations

import statistics

from trainers.delta.linear_fit import fit_linear_delta
from trainers.real.bench import record_bench_log

REFERENCE_RATIO = 3.82 / 8.16

for profile in ("soft_ankles", "delay", "soft_ankles_delay", "friction", "combined"):
    log = record_bench_log(profile)
    results = [fit_linear_delta(log) for _ in range(3)]
    r = results[0]
    ratio = r.rms_after_deg / r.rms_before_deg
    wall = statistics.median(x.wall_s for x in results)
    print(
        f"{profile:<18} {r.rms_before_deg:6.2f}° → {r.rms_after_deg:5.2f}°  ratio {ratio:.2f} "
        f"(classroom {REFERENCE_RATIO:.2f}, ours/classroom {ratio / REFERENCE_RATIO:.2f})  "
        f"a={[round(float(a), 3) for a in r.delta.a]}  median fit {wall:.1f} s"
    )
