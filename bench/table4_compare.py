"""One method of Table IV run two ways on the same policies and episodes (e.g. ASAP with two Δa kinds): each way's
share of the Vanilla→Oracle gap and their paired difference, per clip and pooled, per robot.

The two bench runs of a clip must share the pre-trained policy, the evaluation episodes and the Oracle (a rerun with
another ``--delta-model`` reusing the Oracle, or a deterministic rerun): the tool checks that Vanilla's and the
Oracle's per-episode results are the same in both and refuses otherwise, because the difference is paired over
those episodes.

    python bench/table4_compare.py --a undamped/squat.json undamped/kick2.json \\
        --b physical/squat.json physical/kick2.json --labels undamped,physical --method ASAP

With ``--raw`` the method's own figures are compared instead of its shares (success, Eg-mpjpe, completion: mean of
each way and the paired difference over the same seeds and episodes), and only Vanilla must be the same in both: the
way to compare a bench run's selected checkpoints (``table4.json``) with its last ones (``table4_last.json``), whose
Oracles differ by the same selection.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table4_report import SHARE_LABELS, ReportError, load_tables, run_label
from table4_stats import (
    DEFAULT_REPLICATES,
    SHARE_METRICS,
    Clip,
    episode_samples,
    format_share,
    gap_share,
    paired_difference,
    share_difference,
)

SHARED = ("Vanilla", "Oracle")
"""Rows both runs must hold identically (the pairing)."""


def paired_clip(a: dict, b: dict, methods: tuple[str, str], names: tuple[str, str], key: str, where: str) -> Clip:
    """Samples of Vanilla, the Oracle and each run's method (``methods``: the first run's, the second's) under its
    label."""
    for shared in SHARED:
        ra, rb = a["results"].get(shared), b["results"].get(shared)
        if ra is None or rb is None:
            raise ReportError(f"{where}: {shared} missing from one of the runs")
        if [r["episodes"] for r in ra] != [r["episodes"] for r in rb]:
            raise ReportError(f"{where}: {shared}'s episodes differ between the runs; they are not paired")
    check_methods(a, b, methods, names, where)
    clip = {s: episode_samples(a["results"][s], key) for s in SHARED}
    clip[names[0]] = episode_samples(a["results"][methods[0]], key)
    clip[names[1]] = episode_samples(b["results"][methods[1]], key)
    return clip


def check_methods(a: dict, b: dict, methods: tuple[str, str], names: tuple[str, str], where: str) -> None:
    """Each run holds the method it is compared by."""
    for summary, method, name in zip((a, b), methods, names):
        if method not in summary["results"]:
            raise ReportError(f"{where}: {method} missing from the {name} run")


def methods_title(methods: tuple[str, str]) -> str:
    return methods[0] if methods[0] == methods[1] else f"{methods[0]} / {methods[1]}"


def table_head(real: str, names: tuple[str, str], suffix: str) -> list[str]:
    """A robot's heading and its table's header (``suffix``: what each way's column shows)."""
    head = f"| clip | metric | {names[0]}{suffix} | {names[1]}{suffix} | {names[0]} − {names[1]} [95 % paired] |"
    return [f"## {real}", "", head, "|---|---|---|---|---|"]


def paired_tables(a_paths: list[Path], b_paths: list[Path]) -> tuple[list[dict], list[dict], list[str]]:
    """The two ways' tables, one of each per clip, and the robots every one of them holds."""
    if len(a_paths) != len(b_paths):
        raise ReportError(f"--a has {len(a_paths)} tables, --b {len(b_paths)}: give one of each per clip")
    a_tables, b_tables = load_tables(a_paths), load_tables(b_paths)
    return a_tables, b_tables, [r for r in a_tables[0]["robots"] if all(r in t["robots"] for t in a_tables + b_tables)]


def compare(
    a_paths: list[Path], b_paths: list[Path], methods: tuple[str, str], names: tuple[str, str], replicates: int
) -> str:
    a_tables, b_tables, robots = paired_tables(a_paths, b_paths)
    lines = [f"# {methods_title(methods)}: {names[0]} against {names[1]} (same policies, episodes and Oracle)", ""]
    for real in robots:
        lines += table_head(real, names, " share")
        pairs = [(run_label(ta), ta["robots"][real], tb["robots"][real]) for ta, tb in zip(a_tables, b_tables)]
        groups = [(label, [(sa, sb)]) for label, sa, sb in pairs]
        if len(pairs) > 1:
            groups.append((f"**pooled ({len(pairs)} clips)**", [(sa, sb) for _, sa, sb in pairs]))
        for label, members in groups:
            for key in SHARE_METRICS:
                clips = [paired_clip(sa, sb, methods, names, key, f"{label} {real}") for sa, sb in members]
                shares = [format_share(gap_share(clips, n, replicates=replicates)) for n in names]
                diff = format_share(share_difference(clips, names[0], names[1], replicates=replicates))
                lines.append(f"| {label} | {SHARE_LABELS[key]} | {shares[0]} | {shares[1]} | {diff} |")
        lines += ["", f"{methods_title(methods)} success per seed (of 8 episodes) and its spread over seeds:"]
        for label, sa, sb in pairs:
            cells = []
            for name, summary, method in zip(names, (sa, sb), methods):
                rates = [r["success_rate"] for r in summary["results"][method]]
                counts = " ".join(str(round(8 * x)) for x in rates)
                cells.append(f"{name} {counts} (± {100 * np.std(rates):.0f})")
            lines.append(f"- {label}: " + "; ".join(cells))
        lines.append("")
    return "\n".join(lines)


RAW_FORMATS = {"success_rate": "{:+.0%}", "eg_mpjpe_mm": "{:+.1f} mm", "completion": "{:+.0%}"}


def compare_raw(
    a_paths: list[Path], b_paths: list[Path], methods: tuple[str, str], names: tuple[str, str], replicates: int
) -> str:
    """The method's own figures, two ways, paired over seeds and episodes (:func:`table4_stats.paired_difference`)."""
    a_tables, b_tables, robots = paired_tables(a_paths, b_paths)
    title = f"# {methods_title(methods)}: {names[0]} against {names[1]}, its own figures (same policies and episodes)"
    lines = [title, ""]
    for real in robots:
        lines += table_head(real, names, "")
        for ta, tb in zip(a_tables, b_tables):
            label, sa, sb = run_label(ta), ta["robots"][real], tb["robots"][real]
            if [r["episodes"] for r in sa["results"]["Vanilla"]] != [r["episodes"] for r in sb["results"]["Vanilla"]]:
                raise ReportError(f"{label} {real}: Vanilla's episodes differ between the runs; they are not paired")
            check_methods(sa, sb, methods, names, f"{label} {real}")
            for key, fmt in RAW_FORMATS.items():
                xa, xb = (episode_samples(s["results"][m], key) for s, m in zip((sa, sb), methods))
                d, lo, hi = paired_difference(xa, xb, replicates=replicates)
                plain = fmt.replace("+", "")
                lines.append(
                    f"| {label} | {SHARE_LABELS[key]} | {plain.format(xa.mean())} | {plain.format(xb.mean())} | "
                    f"{fmt.format(d)} [{fmt.format(lo)}, {fmt.format(hi)}] |"
                )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", nargs="+", type=Path, required=True, help="table4.json of the first way, one per clip")
    ap.add_argument("--b", nargs="+", type=Path, required=True, help="the second way's, same clips in the same order")
    ap.add_argument("--labels", default="a,b", help="names of the two ways, comma-separated")
    ap.add_argument("--method", default="ASAP")
    ap.add_argument("--method-b", default=None, help="the second run's method, if not --method (e.g. ASAP-E vs ASAP)")
    ap.add_argument("--replicates", type=int, default=DEFAULT_REPLICATES)
    ap.add_argument("--raw", action="store_true", help="the method's own figures, paired, instead of gap shares")
    ap.add_argument("-o", "--out", type=Path, default=None, help="markdown file to write (else printed only)")
    args = ap.parse_args(argv)
    names = tuple(args.labels.split(","))
    if len(names) != 2 or names[0] == names[1]:
        raise SystemExit(f"--labels {args.labels}: give two different names")
    try:
        run = compare_raw if args.raw else compare
        methods = (args.method, args.method_b or args.method)
        text = run(args.a, args.b, methods, (names[0], names[1]), args.replicates)
    except ReportError as exc:
        raise SystemExit(str(exc)) from None
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
