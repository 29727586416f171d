"""Peak memory of the CLI refusing each hostile size input of tests/fuzz_inputs.py, against the same
command run normally on the real file the hostile one was made from (the named reference).

    python tests/measure_hostile_memory.py [--repeats 3]

It lives with the tests because it runs their hostile-input generator (tests/fuzz_inputs.py), which
the benches may not import.

Prints, per case, the median peak resident memory [MiB] of the refused run and of the reference run,
and their ratio. The issue measured the unfixed code at 22.7 GB (`retarget --fps 1e6`) and 11.5 GiB
(the shared nested lists)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # run as a script: the tests' own modules

from fuzz_inputs import CASES, clip_npz, ref_pkl, short_bvh

REFERENCES = {
    "retarget": lambda d: ["retarget", str(clip_npz(d)), "-o", str(d / "out.pkl")],
    "convert_bvh": lambda d: ["convert", str(short_bvh(d)), str(d / "out.npz"), "--bvh-unit", "cmu"],
    "convert": lambda d: ["convert", str(ref_pkl(d)), str(d / "out.csv")],
    "inspect": lambda d: ["inspect", str(ref_pkl(d))],
    "delta_fit": lambda d: ["delta", "fit", str(ref_pkl(d)), "-o", str(d / "delta.pt")],  # reads, then refuses
}
"""The real-file run each hostile case is compared with, by the case name's prefix (longest first)."""


def peak_rss_mib(args: list[str]) -> tuple[float, int]:
    """Peak resident memory [MiB] and exit code of `asap-retarget ARGS` in a fresh process."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from cli.main import main; main()", *args],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024.0, proc.returncode  # Linux reports KiB


def median_peak(build, repeats: int) -> tuple[float, int]:
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(peak_rss_mib(build(Path(tmp))))
    return statistics.median(r[0] for r in runs), runs[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    reference_mib = {name: median_peak(build, args.repeats) for name, build in REFERENCES.items()}
    print(f"median of {args.repeats} runs; reference: the same command on the real file (exit code in brackets)")
    print(f"{'case':34s} {'exit':>4s} {'peak MiB':>9s} {'reference':>16s} {'MiB':>6s} {'ratio':>6s}")
    for case in (c for c in CASES if c.memory):
        ref = max((name for name in REFERENCES if case.name.startswith(name)), key=len)
        peak, code = median_peak(lambda d, case=case: case.build(d).args, args.repeats)
        ref_peak, ref_code = reference_mib[ref]
        print(
            f"{case.name:34s} {code:4d} {peak:9.0f} {ref + f' [{ref_code}]':>16s}"
            f" {ref_peak:6.0f} {peak / ref_peak:6.2f}"
        )


if __name__ == "__main__":
    main()
