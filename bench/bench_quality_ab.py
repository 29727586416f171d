"""Two checkouts' retargets on the 39 clips, side by side with the official ASAP retargets, in one run.

    python bench/bench_quality_ab.py OLD_CHECKOUT NEW_CHECKOUT [--sequence-ik KEY=VALUE ...] [--json OUT.json]

Runs ``bench/bench_quality.py --methods ours "ASAP official"`` of each checkout in its own process (``PYTHONPATH``
set to that checkout, default config; ``--sequence-ik`` applies to the new one only) and prints, per metric of
:data:`bench_quality.ROWS`, the median (mean) over clips of ASAP, old and new, and new/old for both. Lower is better
on every row; a row is marked where new exceeds old by more than 5 % in the median (the figure the project reports)
and, separately, in the mean (which one clip can move). The signed sole height is a bias within round-off of zero
(thousandths of a millimetre) and is not marked; its magnitude is the row above.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_quality import ROWS

TOLERANCE = 1.05
"""A figure counts as worse when new exceeds old by more than this factor."""
UNMARKED = {"stance_sole_height_mm"}
"""Rows not marked (see the module docstring)."""


def _quality_report(checkout: Path, out: Path, sequence_ik: list[str] | None) -> dict:
    script = checkout / "bench" / "bench_quality.py"
    cmd = [sys.executable, str(script)]
    # Older checkouts (before --methods) score every method, the GMR-style baseline included; slower, same figures.
    if "--methods" in script.read_text():
        cmd += ["--methods", "ours", "ASAP official"]
    cmd += ["--json", str(out)] + (["--sequence-ik", *sequence_ik] if sequence_ik else [])
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run(cmd, check=True, env=env, cwd=checkout, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def _ratio(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or abs(old) < 1e-9:
        return None
    return abs(new) / abs(old)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--sequence-ik", nargs="+", metavar="KEY=VALUE", help="SequenceIkConfig changes, new only")
    parser.add_argument("--json", type=Path, default=None, help="write both reports here")
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        old = _quality_report(args.old.resolve(), Path(tmp) / "old.json", None)
        new = _quality_report(args.new.resolve(), Path(tmp) / "new.json", args.sequence_ik)
    title = f"old {args.old} vs new {args.new} {' '.join(args.sequence_ik or [])}: median (mean) over 39 clips"
    table = Table(title=escape(title))
    for col in ("metric", "ASAP official", "old", "new", "new/old median", "new/old mean", "> 5 %: median", "mean"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    worse = []
    for field, label in ROWS:
        cells = []
        for report in (old["ASAP official"], old["ours"], new["ours"]):
            med, mean = report["median"].get(field), report["mean"].get(field)
            cells.append("—" if med is None else f"{med:.4g} ({mean:.4g})")
        ratios = [_ratio(new["ours"][k].get(field), old["ours"][k].get(field)) for k in ("median", "mean")]
        flags = ["" if field in UNMARKED or r is None or r <= TOLERANCE else "worse" for r in ratios]
        if flags[0]:
            worse.append(label)
        table.add_row(escape(label), *cells, *("—" if r is None else f"{r:.3f}×" for r in ratios), *flags)
    Console(width=220).print(table)
    print(f"medians worse by more than 5 %: {', '.join(worse) or 'none'}; total {time.perf_counter() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"old": old, "new": new}, indent=2))


if __name__ == "__main__":
    main()
