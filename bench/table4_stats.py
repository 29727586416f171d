"""Shares of the Vanilla→Oracle gap with bootstrap 95 % confidence intervals, for Table IV.

A method's share of the gap for a metric is (M − V) / (O − V), with M, V, O the metric of the method, of
Vanilla (the pre-trained policy) and of the Oracle. Each of them is measured on the same matched evaluation
episodes (same physics draws or starts) for every fine-tuning seed. The interval is a percentile bootstrap
that redraws both sources of noise:

* the evaluation episodes: one redraw of episode indices per replicate, shared by every method, because the
  episodes are matched (method and baseline see the same draw, so their pairing is kept);
* the fine-tuning seeds: each method's seeds are redrawn on their own (different methods, independent runs).

Several clips (strata) pool into one share: every clip is redrawn on its own and the pooled metric is the
unweighted mean of the per-clip metrics, so a long clip does not outvote a short one.

A metric of a group of episodes is the weighted mean of the per-episode values (weights: frames for
Eg-mpjpe, which makes it the frame-weighted figure of the table; ones for success and completion).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_REPLICATES = 2000
"""Bootstrap replicates per share (the 2.5 % and 97.5 % percentiles move by < 1 % of the gap beyond this)."""


@dataclass(frozen=True)
class Samples:
    """Per-episode values of one method on one clip."""

    values: np.ndarray
    """(seeds, episodes) metric of every evaluation episode of every fine-tuning seed."""
    weights: np.ndarray
    """(seeds, episodes) weight of each value (frames for a frame-weighted metric, else ones)."""

    @staticmethod
    def of(values, weights=None) -> Samples:
        v = np.atleast_2d(np.asarray(values, dtype=float))
        w = np.ones_like(v) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
        if v.shape != w.shape:
            raise ValueError(f"values {v.shape} and weights {w.shape} differ in shape")
        return Samples(v, w)

    def mean(self, seeds: np.ndarray | None = None, episodes: np.ndarray | None = None) -> float:
        v, w = self.values, self.weights
        if seeds is not None:
            v, w = v[seeds], w[seeds]
        if episodes is not None:
            v, w = v[:, episodes], w[:, episodes]
        return float((v * w).sum() / w.sum())


Clip = dict[str, Samples]
"""method name → its samples on one clip (must hold the baseline and the Oracle)."""


@dataclass(frozen=True)
class GapShare:
    """A method's share of the Vanilla→Oracle gap: point estimate and percentile-bootstrap interval."""

    share: float
    low: float
    high: float
    gap: float
    """Oracle minus Vanilla (pooled metric); the share is undefined (nan) when it is zero."""


def pooled_mean(clips: list[Clip], method: str, draws: list[tuple[np.ndarray, dict[str, np.ndarray]]] | None) -> float:
    """Unweighted mean over clips of the method's metric (on the redrawn episodes and seeds when given)."""
    if draws is None:
        return float(np.mean([clip[method].mean() for clip in clips]))
    return float(np.mean([clip[method].mean(seeds[method], eps) for clip, (eps, seeds) in zip(clips, draws)]))


def _share(clips: list[Clip], method: str, baseline: str, oracle: str, draws=None) -> tuple[float, float]:
    base = pooled_mean(clips, baseline, draws)
    gap = pooled_mean(clips, oracle, draws) - base
    share = (pooled_mean(clips, method, draws) - base) / gap if abs(gap) > 1e-12 else float("nan")
    return share, gap


def _check(clips: list[Clip], baseline: str) -> None:
    for clip in clips:
        num_episodes = clip[baseline].values.shape[1]
        for name, s in clip.items():
            if s.values.shape[1] != num_episodes:
                raise ValueError(f"{name}: {s.values.shape[1]} episodes, {baseline} has {num_episodes}")


def _redraw(clips: list[Clip], baseline: str, rng: np.random.Generator) -> list:
    """One bootstrap replicate's draws per clip: episode indices (shared by every method) and each method's seeds."""
    draws = []
    for clip in clips:
        num_episodes = clip[baseline].values.shape[1]
        eps = rng.integers(num_episodes, size=num_episodes)  # shared by every method: matched episodes
        seeds = {name: rng.integers(len(s.values), size=len(s.values)) for name, s in clip.items()}
        draws.append((eps, seeds))
    return draws


def bootstrap_shares(
    clips: list[Clip],
    method: str,
    baseline: str = "Vanilla",
    oracle: str = "Oracle",
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    minus: str | None = None,
) -> np.ndarray:
    """(replicates,) bootstrap draws of ``method``'s pooled gap share (nan where the redrawn gap is zero); with
    ``minus``, of the difference between ``method``'s share and ``minus``'s on the same draws."""
    _check(clips, baseline)
    rng = np.random.default_rng(seed)
    boot = np.empty(replicates)
    for b in range(replicates):
        draws = _redraw(clips, baseline, rng)
        boot[b] = _share(clips, method, baseline, oracle, draws)[0]
        if minus is not None:
            boot[b] -= _share(clips, minus, baseline, oracle, draws)[0]
    return boot


def paired_difference(
    a: Samples, b: Samples, replicates: int = DEFAULT_REPLICATES, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean of ``a`` minus mean of ``b`` where both come from the same fine-tuning seeds and the same episodes (one
    method deployed two ways), and its percentile-bootstrap interval: each replicate redraws seeds and episodes
    once, for both."""
    if a.values.shape != b.values.shape:
        raise ValueError(f"{a.values.shape} and {b.values.shape} samples are not paired")
    rng = np.random.default_rng(seed)
    n_seeds, n_eps = a.values.shape
    boot = np.empty(replicates)
    for k in range(replicates):
        seeds, eps = rng.integers(n_seeds, size=n_seeds), rng.integers(n_eps, size=n_eps)
        boot[k] = a.mean(seeds, eps) - b.mean(seeds, eps)
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(boot, [tail, 100.0 - tail])
    return a.mean() - b.mean(), float(low), float(high)


def _interval(point: float, gap: float, boot: np.ndarray, level: float) -> GapShare:
    finite = boot[np.isfinite(boot)]
    if finite.size == 0:
        return GapShare(point, float("nan"), float("nan"), gap)
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return GapShare(point, float(low), float(high), gap)


def share_difference(
    clips: list[Clip],
    method: str,
    other: str,
    baseline: str = "Vanilla",
    oracle: str = "Oracle",
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
) -> GapShare:
    """``method``'s share minus ``other``'s (e.g. ASAP − SysID) with a paired bootstrap interval: both shares are
    computed on the same redrawn episodes, so what the two methods share of the noise cancels."""
    point_a, gap = _share(clips, method, baseline, oracle)
    point = point_a - _share(clips, other, baseline, oracle)[0]
    boot = bootstrap_shares(clips, method, baseline, oracle, replicates, seed, minus=other)
    return _interval(point, gap, boot, level)


def gap_share(
    clips: list[Clip],
    method: str,
    baseline: str = "Vanilla",
    oracle: str = "Oracle",
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
) -> GapShare:
    """``method``'s share of the ``baseline``→``oracle`` gap pooled over ``clips``, with a ``level`` interval.

    Replicates whose redrawn gap is zero (the share is undefined there) are left out of the percentiles."""
    share, gap = _share(clips, method, baseline, oracle)
    return _interval(share, gap, bootstrap_shares(clips, method, baseline, oracle, replicates, seed), level)


def format_share(g: GapShare) -> str:
    """'52 % [31, 70]' (percent of the gap; '—' when the gap is zero)."""
    if not np.isfinite(g.share):
        return "—"
    if not np.isfinite(g.low):
        return f"{g.share:.0%}"
    return f"{100 * g.share:.0f} % [{100 * g.low:.0f}, {100 * g.high:.0f}]"


def episode_noise(rows: list[dict]) -> float:
    """The spread over seeds that the episodes alone would give: the standard error of a seed's success rate
    from its n episodes, p̂(1 − p̂)/(n − 1) (unbiased for p(1 − p)/n), root mean over the seeds ``rows`` (bench
    rows with per-episode results). Seeds whose policies were equally good, each scored on n independent episodes,
    would spread about this much; matched episodes shared by every seed make the real share smaller, not larger."""
    variances = []
    for row in rows:
        wins = np.asarray(row["episodes"]["success_rate"], dtype=float)
        n = len(wins)
        if n < 2:
            raise ValueError("a seed scored on one episode has no episode noise to estimate")
        p = wins.mean()
        variances.append(p * (1.0 - p) / (n - 1))
    return float(np.sqrt(np.mean(variances)))


ORDER = ("Vanilla", "Continued", "ActionNoise", "SysID", "DeltaDynamics", "ASAP", "ASAP-TR", "ASAP-E", "Oracle")
"""Table IV's methods in row order ("ASAP-TR": ASAP fine-tuned within a KL trust region of the pre-trained policy;
"ASAP-E": ASAP fine-tuned against an ensemble of bootstrap Δa fits, :mod:`trainers.delta.ensemble`; options, not in
the bench's default methods)."""
OPTIONAL_METHODS = ("ASAP-TR", "ASAP-E")
COMPARED = (
    ("ASAP", "SysID"),
    ("ASAP", "Continued"),
    ("ASAP-TR", "ASAP"),
    ("ASAP-TR", "SysID"),
    ("ASAP-E", "ASAP"),
    ("ASAP-E", "SysID"),
)
"""Pairs whose difference of gap shares gets its own paired interval (the paper's question: does Δa beat SysID)."""
ROUND_METHODS = ("SysID", "ASAP")
"""Methods whose correction is fitted on "real" rollouts, so a later round can collect with their fine-tuned policy,
refit on every round's rollouts and fine-tune again (rows "ASAP r2", "SysID r2", ...)."""


def round_name(method: str, k: int) -> str:
    """Table row of ``method``'s round ``k`` ('ASAP' for round 1, 'ASAP r2' for round 2)."""
    return method if k == 1 else f"{method} r{k}"


def parse_round(name: str) -> tuple[str, int]:
    """'ASAP r2' → ('ASAP', 2), 'SysID' → ('SysID', 1); ValueError for a name that is no Table IV row."""
    method, later, suffix = name.partition(" r")
    k = 1 if not later else int(suffix) if suffix.isdigit() else 0
    if method not in ORDER or (later and (k < 2 or method not in ROUND_METHODS)):
        raise ValueError(f"{name!r} is not a Table IV method ({', '.join(ORDER)}, or 'ASAP r2', 'SysID r2', ...)")
    return method, k


def method_order(names) -> list[str]:
    """``names`` in Table IV's row order, each later round right after its method's earlier ones."""
    return sorted(names, key=lambda n: (ORDER.index(parse_round(n)[0]), parse_round(n)[1]))


def compared_pairs(names) -> list[tuple[str, str]]:
    """The paired differences to report among ``names``: :data:`COMPARED`, and for every later ASAP round its gain
    over the round before and its difference to SysID's round of the same budget."""
    present = set(names)
    pairs = [(a, b) for a, b in COMPARED if a in present and b in present]
    for name in method_order(present):
        method, k = parse_round(name)
        if method == "ASAP" and k > 1:
            pairs.append((name, round_name(method, k - 1)))
            if round_name("SysID", k) in present:
                pairs.append((name, round_name("SysID", k)))
    return pairs


SHARE_METRICS = ("success_rate", "eg_mpjpe_mm", "completion")
"""The metrics whose gap shares Table IV reports."""
FRAME_WEIGHTED = ("eg_mpjpe_mm",)
"""Metrics averaged over frames (the table's figure weights each episode by its length)."""


def episode_samples(rows: list[dict], key: str) -> Samples:
    """A method's per-episode ``key`` from its table4.json rows (one row per seed, each with ``episodes``)."""
    values = [row["episodes"][key] for row in rows]
    weights = [row["episodes"]["frames"] for row in rows] if key in FRAME_WEIGHTED else None
    return Samples.of(values, weights)
