"""Whether a Δa fit is reproducible: the same collection fitted three times — in this process with 1 torch thread,
in this process with ``--threads``, and by ``asap-retarget delta fit`` in a fresh process whose torch and BLAS pools
have ``--threads`` (torch's set in that process, BLAS's through OMP/MKL/OPENBLAS_NUM_THREADS) — and each file
compared with the first (same bytes? largest weight difference, as a share of the largest weight) and with a
reference Δa file, by default the ``delta.pt`` next to the collection (the one a bench_table4.py run fitted on those
rollouts).

    python bench/bench_delta_repro.py OUT/combined/collect.pkl --model per_joint_linear --threads 4
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retarget.errors import AsapRetargetError
from trainers.delta.collection import read_collection
from trainers.delta.defaults import DEFAULT_MODEL, MODEL_KINDS
from trainers.delta.learned import LearnedDelta, LearnedDeltaConfig, fit_learned_delta


def weights(model: LearnedDelta) -> dict[str, np.ndarray]:
    """Every number of a Δa file that its output depends on: the model's tensors and the feature normalization."""
    out = {k: v.numpy().astype(np.float64) for k, v in model.model.state_dict().items()}
    return out | {"mean": np.asarray(model.mean, dtype=np.float64), "std": np.asarray(model.std, dtype=np.float64)}


def relative_gap(a: LearnedDelta, b: LearnedDelta) -> float:
    """Largest |w_a − w_b| over the model's parameters, over the largest |w_a|."""
    wa, wb = weights(a), weights(b)
    params = [k for k in wa if k not in ("mean", "std", "columns")]
    gap = max(float(np.abs(wa[k] - wb[k]).max()) for k in params)
    return gap / max(float(np.abs(wa[k]).max()) for k in params)


def in_process(collection: Path, cfg: LearnedDeltaConfig, threads: int, out: Path) -> float:
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        t = time.perf_counter()
        fit_learned_delta(list(read_collection(collection).values()), cfg)[0].save(out)
        return time.perf_counter() - t
    finally:
        torch.set_num_threads(before)


def other_process(collection: Path, cfg: LearnedDeltaConfig, threads: int, out: Path) -> float:
    env = {**os.environ, **{k: str(threads) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    # Torch's pool is set in the command itself: from OMP_NUM_THREADS alone it stops at the physical core count.
    code = f"import sys, torch; torch.set_num_threads({threads}); from cli.main import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "delta", "fit"]
    cmd += [str(collection), "-o", str(out), "--model", cfg.model, "--epochs", str(cfg.epochs)]
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"delta fit in a fresh process failed: {done.stderr.strip().splitlines()[-1]}")
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("collection", type=Path, help="a collection file (collect.pkl)")
    ap.add_argument("--model", default=DEFAULT_MODEL, choices=MODEL_KINDS)
    ap.add_argument("--threads", type=int, default=4, help="torch threads of the second and third fit")
    ap.add_argument("--reference", type=Path, default=None, help="Δa file to compare with (default: the collection's")
    args = ap.parse_args(argv)
    if not args.collection.is_file():
        sys.exit(f"{args.collection}: no such collection file")
    try:
        read_collection(args.collection)  # a file that is not a collection fails here, in one line
        return compare(args)
    except AsapRetargetError as exc:
        sys.exit(f"error: {exc}")


def compare(args: argparse.Namespace) -> dict:
    """The three fits, each compared with the first and with the reference; the printed table's rows."""
    reference = args.reference or args.collection.parent / "delta.pt"
    cfg = LearnedDeltaConfig(model=args.model)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        fits = {
            "this process, 1 thread": (in_process, 1),
            f"this process, {args.threads} threads": (in_process, args.threads),
            f"delta fit, new process, {args.threads} threads": (other_process, args.threads),
        }
        paths = {}
        for i, (name, (fit, threads)) in enumerate(fits.items()):
            paths[name] = Path(tmp) / f"fit{i}.pt"
            seconds = fit(args.collection, cfg, threads, paths[name])
            rows[name] = {"seconds": round(seconds, 1), "sha256": hashlib.sha256(paths[name].read_bytes()).hexdigest()}
        first_name = next(iter(paths))
        first = LearnedDelta.load(paths[first_name])
        print(f"{args.collection}: {args.model} Δa fitted 3 times; weights against the first fit")
        print("| fit | s | sha256 | same bytes as the first | largest weight gap / largest weight |")
        print("|---|---|---|---|---|")
        for name, path in paths.items():
            row = rows[name]
            row["same_bytes"] = path.read_bytes() == paths[first_name].read_bytes()
            row["relative_gap"] = relative_gap(first, LearnedDelta.load(path))
            cells = [name, row["seconds"], row["sha256"][:12], row["same_bytes"], f"{row['relative_gap']:.2e}"]
            print("| " + " | ".join(str(c) for c in cells) + " |")
        if reference.is_file():
            ref = LearnedDelta.load(reference)
            if ref.cfg.model == args.model:
                same = reference.read_bytes() == paths[first_name].read_bytes()
                rows["reference"] = {
                    "path": str(reference),
                    "same_bytes": same,
                    "relative_gap": relative_gap(first, ref),
                }
                print(
                    f"| reference {reference} | | {hashlib.sha256(reference.read_bytes()).hexdigest()[:12]} | {same} "
                    f"| {rows['reference']['relative_gap']:.2e} |"
                )
    return rows


if __name__ == "__main__":
    main()
