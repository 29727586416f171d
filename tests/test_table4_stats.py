"""Gap shares of Table IV and their bootstrap intervals: answers worked out by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from table4_stats import Samples, bootstrap_shares, episode_samples, format_share, gap_share, share_difference


def _clip(vanilla, oracle, method, weights=None) -> dict[str, Samples]:
    w = lambda v: None if weights is None else np.broadcast_to(weights, np.atleast_2d(v).shape)
    return {
        "Vanilla": Samples.of(vanilla, w(vanilla)),
        "Oracle": Samples.of(oracle, w(oracle)),
        "M": Samples.of(method, w(method)),
    }


def test_constant_samples_give_the_share_with_zero_width():
    clip = _clip(np.zeros((1, 4)), np.ones((3, 4)), np.full((3, 4), 0.5))
    g = gap_share([clip], "M")
    assert (g.share, g.low, g.high, g.gap) == (0.5, 0.5, 0.5, 1.0)


def test_matched_episodes_keep_their_pairing():
    # Episodes differ a lot (0, 10, 20 mm) but in every one the method sits halfway between Vanilla and the
    # Oracle: redrawing the episodes jointly keeps the share at exactly one half.
    vanilla = np.array([[0.0, 10.0, 20.0]])
    clip = _clip(vanilla, vanilla + 10.0, vanilla + 5.0)
    g = gap_share([clip], "M")
    assert g.share == pytest.approx(0.5) and g.low == pytest.approx(0.5) and g.high == pytest.approx(0.5)


def test_two_episode_bootstrap_matches_its_enumeration():
    # Method episodes (0, 1), gap 1: redraws (0,0), (0,1), (1,0), (1,1) give shares 0, ½, ½, 1 with ¼ each.
    clip = _clip([[0.0, 0.0]], [[1.0, 1.0]], [[0.0, 1.0]])
    boot = bootstrap_shares([clip], "M", replicates=4000)
    for value, p in ((0.0, 0.25), (0.5, 0.5), (1.0, 0.25)):
        assert np.mean(boot == value) == pytest.approx(p, abs=4 * np.sqrt(p * (1 - p) / 4000))
    g = gap_share([clip], "M")
    assert (g.share, g.low, g.high) == (0.5, 0.0, 1.0)


def test_seeds_are_redrawn_per_method():
    # Two fine-tuning seeds of the method (0.2 and 0.8 of the gap), one episode: draws 0.2, 0.5, 0.5, 0.8.
    clip = _clip([[0.0]], [[1.0]], [[0.2], [0.8]])
    boot = bootstrap_shares([clip], "M", replicates=4000)
    assert set(np.round(boot, 12)) == {0.2, 0.5, 0.8}
    g = gap_share([clip], "M")
    assert g.share == pytest.approx(0.5) and (g.low, g.high) == pytest.approx((0.2, 0.8))


def test_frame_weights_and_pooling_over_clips():
    # Frame-weighted: Vanilla (100 mm over 1 frame, 200 mm over 3) = 175 mm; Oracle 75 mm; method 125 mm → ½.
    frames = np.array([1.0, 3.0])
    one = _clip([[100.0, 200.0]], [[0.0, 100.0]], [[50.0, 150.0]], weights=frames)
    assert gap_share([one], "M").share == pytest.approx(0.5)
    # A second clip with gap 20 closed by 20: pooled (unweighted mean of clips) (50 + 20) / (100 + 20).
    two = _clip([[40.0, 40.0]], [[20.0, 20.0]], [[20.0, 20.0]])
    assert gap_share([one, two], "M").share == pytest.approx(70 / 120)


def test_zero_gap_is_undefined_and_shown_as_a_dash():
    g = gap_share([_clip([[1.0]], [[1.0]], [[0.0]])], "M")
    assert np.isnan(g.share) and format_share(g) == "—"
    assert format_share(gap_share([_clip([[0.0, 0.0]], [[1.0, 1.0]], [[0.0, 1.0]])], "M")) == "50 % [0, 100]"


def test_episode_samples_read_the_bench_rows_and_weight_eg_by_frames():
    rows = [
        {"episodes": {"eg_mpjpe_mm": [10.0, 20.0], "frames": [1, 3], "success_rate": [1.0, 0.0]}},
        {"episodes": {"eg_mpjpe_mm": [30.0, 40.0], "frames": [2, 2], "success_rate": [0.0, 0.0]}},
    ]
    eg = episode_samples(rows, "eg_mpjpe_mm")
    assert eg.mean() == pytest.approx((10 + 60 + 60 + 80) / 8)
    assert episode_samples(rows, "success_rate").mean() == 0.25
    with pytest.raises(ValueError, match="episodes"):
        gap_share([{"Vanilla": Samples.of([[0.0]]), "Oracle": Samples.of([[1.0, 1.0]]), "M": eg}], "M")


def test_share_difference_is_paired_on_the_same_episode_draws():
    # Episodes differ a lot; A sits halfway between Vanilla and the Oracle in each, B stays at Vanilla: the
    # difference of their shares is exactly ½ in every replicate, and identical methods differ by exactly 0.
    vanilla = np.array([[0.0, 10.0, 20.0, 40.0]])
    clip = {
        "Vanilla": Samples.of(vanilla),
        "Oracle": Samples.of(vanilla + 10.0),
        "A": Samples.of(np.repeat(vanilla + 5.0, 3, axis=0)),
        "B": Samples.of(np.repeat(vanilla, 3, axis=0)),
        "C": Samples.of(np.repeat(vanilla + 5.0, 3, axis=0)),
    }
    d = share_difference([clip], "A", "B")
    assert (d.share, d.low, d.high) == pytest.approx((0.5, 0.5, 0.5))
    same = share_difference([clip], "A", "C")
    assert (same.share, same.low, same.high) == (0.0, 0.0, 0.0)
