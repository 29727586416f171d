"""A per-joint Δa with some of its fitted terms removed: which term of a fitted model makes an effect.

Each output joint's δ_j = a_j·(q*_j − q_j) + b_j·0.05·q̇_j + c_j·(q*_{t−1,j} − q*_{t,j}) + bias_j (on the raw
features; the file stores weights on normalized ones). ``--drop damping`` writes the same model with every b_j = 0
and every other raw coefficient and raw bias unchanged, so the δ it gives is the fitted one minus that term — an
ablation of the fit, not a refit. Fine-tune against the copy (``asap-retarget train finetune --delta COPY``) or pass
a bench folder holding it to ``bench_table4.py --corrections-from``.

    python bench/delta_ablate.py OUT/combined/delta.pt --drop damping -o nodamp.pt
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from trainers.delta.defaults import PER_JOINT_KINDS, TERMS
from trainers.delta.learned import LearnedDelta
from trainers.delta.per_joint import column_terms


def drop_terms(delta: LearnedDelta, drop: tuple[str, ...]) -> LearnedDelta:
    """A copy of ``delta`` (a per-joint kind) with the raw coefficients of the terms in ``drop`` set to 0 and the
    raw bias (δ at all-zero raw features) kept. A term the model does not fit is refused, not skipped."""
    if delta.cfg.model not in PER_JOINT_KINDS:
        raise ValueError(f"only a per-joint Δa has separable terms; this one is {delta.cfg.model}")
    unknown = set(drop) - set(TERMS)
    if unknown:
        raise ValueError(f"unknown terms {sorted(unknown)}; valid: {', '.join(TERMS)}")
    model = delta.model
    cols = model.columns.numpy()
    # Features: [q* − q (D), 0.05·q̇ (D), ω_b (3), g_b (3)] (+ q*_{t−1} − q*_t (D)).
    num_dof = (len(delta.mean) - 6) // (3 if delta.cfg.previous_target else 2)
    terms = column_terms(cols, num_dof)
    absent = [t for t in drop if t not in terms]
    if absent:
        raise ValueError(f"this Δa ({delta.cfg.model}) has no {', '.join(absent)} term; it fits {', '.join(terms)}")
    std, mean = np.asarray(delta.std)[cols], np.asarray(delta.mean)[cols]
    weight = model.weight.detach().numpy().astype(float)
    raw_bias = model.bias.detach().numpy() - (weight * mean / std).sum(1)
    for name in drop:
        weight[:, terms.index(name)] = 0.0
    out = type(model)(cols)
    with torch.no_grad():
        out.weight.copy_(torch.as_tensor(weight, dtype=out.weight.dtype))
        out.bias.copy_(torch.as_tensor(raw_bias + (weight * mean / std).sum(1), dtype=out.bias.dtype))
    return LearnedDelta(out.eval(), delta.joint_ids, delta.mean, delta.std, delta.cfg)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("delta", help="a per-joint delta.pt")
    ap.add_argument("--drop", required=True, help=f"comma list of terms to remove: {', '.join(TERMS)}")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args(argv)
    if Path(args.out).resolve() == Path(args.delta).resolve():
        raise SystemExit(f"{args.out}: would overwrite the fitted model; give another path")
    try:
        dropped = drop_terms(LearnedDelta.load(args.delta), tuple(t for t in args.drop.split(",") if t))
    except ValueError as exc:
        raise SystemExit(f"{args.delta}: {exc}") from None
    print(f"wrote {dropped.save(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
