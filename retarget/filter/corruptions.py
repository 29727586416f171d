"""Corrupted versions of real SMPL clips, each with the frames it corrupts and the check meant to catch it.

They measure the physics filter (tests/test_filter_corruptions.py, bench/bench_filter.py). As a script it writes
the corrupted clips as AMASS .npz files:

    python -m retarget.filter.corruptions motions_raw/video_walk_level1_filter_amass.npz -o /tmp/corrupt
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from retarget.smpl_sequence import SmplSequence

RAMP_S = 0.3
"""Lifts and sinks ease in and out over this long (a step would be a teleport, not a float)."""


@dataclass(frozen=True)
class Corruption:
    name: str
    seq: SmplSequence
    expected_check: str | None
    """The check meant to catch it (None: nothing should fail; a repair is expected instead)."""
    frames: tuple[int, int]
    """Corrupted frame range of the sequence as it would be resampled to `fps_out` (stop exclusive)."""


def _segment(num: int, fps: float) -> tuple[int, int]:
    """The middle third of the clip, at least 1.2 s long."""
    length = max(num // 3, int(1.2 * fps))
    start = max((num - length) // 2, 0)
    return start, min(start + length, num)


def _ramp(num: int, a: int, b: int, fps: float) -> np.ndarray:
    """(T,) 0 outside [a, b), 1 inside, with raised-cosine edges of RAMP_S inside the segment."""
    w = np.zeros(num)
    w[a:b] = 1.0
    n = max(int(RAMP_S * fps), 1)
    edge = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, n + 2)[1:-1])
    w[a : a + n] = edge
    w[b - n : b] = edge[::-1]
    return w


def _with(seq: SmplSequence, suffix: str, pose=None, trans=None, fps=None) -> SmplSequence:
    return replace(
        seq,
        name=f"{seq.name}__{suffix}",
        pose_rotvec=seq.pose_rotvec if pose is None else pose,
        trans_w=seq.trans_w if trans is None else trans,
        fps=seq.fps if fps is None else fps,
    )


def lift(seq: SmplSequence, height_m: float = 0.15) -> Corruption:
    a, b = _segment(seq.num_frames, seq.fps)
    trans = seq.trans_w.copy()
    trans[:, 2] += height_m * _ramp(seq.num_frames, a, b, seq.fps)
    return Corruption("lift_15cm", _with(seq, "lift", trans=trans), "human.floating", (a, b))


def sink(seq: SmplSequence, depth_m: float = 0.08) -> Corruption:
    a, b = _segment(seq.num_frames, seq.fps)
    trans = seq.trans_w.copy()
    trans[:, 2] -= depth_m * _ramp(seq.num_frames, a, b, seq.fps)
    return Corruption("sink_8cm", _with(seq, "sink", trans=trans), "human.penetration", (a, b))


def teleport(seq: SmplSequence, jump_m: float = 0.5) -> Corruption:
    k = seq.num_frames // 2
    trans = seq.trans_w.copy()
    trans[k:, 0] += jump_m
    return Corruption("teleport_50cm", _with(seq, "teleport", trans=trans), "human.root_teleport", (k - 1, k + 1))


def time_scale(seq: SmplSequence, factor: float = 4.0) -> Corruption:
    fast = _with(seq, f"x{factor:g}", fps=seq.fps * factor)
    num_out = int(np.floor((seq.num_frames - 1) / factor + 1e-9)) + 1
    return Corruption(f"time_x{factor:g}", fast, "human.joint_speed", (0, num_out))


def skate(seq: SmplSequence, speed_m_s: float = 1.2) -> Corruption:
    """The pose freezes (no steps) while the root keeps sliding along x: the feet skate."""
    a, b = _segment(seq.num_frames, seq.fps)
    pose, trans = seq.pose_rotvec.copy(), seq.trans_w.copy()
    pose[a:b] = pose[a]
    slide = speed_m_s * np.arange(b - a) / seq.fps
    trans[a:b] = trans[a]
    trans[a:b, 0] += slide
    # The rest of the clip carries on from where the slide ended (no jump at the end).
    trans[b:] += trans[a] - seq.trans_w[b] + np.array([slide[-1] + speed_m_s / seq.fps, 0.0, 0.0])
    return Corruption("skate_1.2m_s", _with(seq, "skate", pose=pose, trans=trans), "human.sliding", (a, b))


def jitter(seq: SmplSequence, trans_sigma_m: float = 0.02, pose_sigma_rad: float = 0.03, seed: int = 0) -> Corruption:
    a, b = _segment(seq.num_frames, seq.fps)
    rng = np.random.default_rng(seed)
    pose, trans = seq.pose_rotvec.copy(), seq.trans_w.copy()
    trans[a:b] += rng.normal(0.0, trans_sigma_m, (b - a, 3))
    pose[a:b] += rng.normal(0.0, pose_sigma_rad, (b - a,) + pose.shape[1:])
    return Corruption("jitter_2cm", _with(seq, "jitter", pose=pose, trans=trans), "human.jitter", (a, b))


def offset(seq: SmplSequence, dz_m: float = 0.10) -> Corruption:
    """The whole clip too high (or low): a calibration error to repair, not to reject."""
    trans = seq.trans_w.copy()
    trans[:, 2] += dz_m
    return Corruption(
        f"offset_{100 * dz_m:+.0f}cm", _with(seq, f"offset{dz_m:+.2f}", trans=trans), None, (0, seq.num_frames)
    )


def all_corruptions(seq: SmplSequence) -> list[Corruption]:
    """Every corruption of one clip (the clip should be at its source rate, 30 Hz here)."""
    return [
        lift(seq),
        sink(seq),
        teleport(seq),
        time_scale(seq),
        skate(seq),
        jitter(seq),
        offset(seq, 0.10),
        offset(seq, -0.10),
    ]


def write_amass_npz(seq: SmplSequence, path: Path) -> None:
    poses = seq.pose_rotvec.reshape(seq.num_frames, -1).astype(np.float32)
    np.savez(
        path,
        poses=poses,
        trans=seq.trans_w.astype(np.float32),
        betas=np.zeros(16, np.float32),
        gender="neutral",
        mocap_framerate=np.float64(seq.fps),
    )


def main() -> None:
    from retarget.readers.amass import read_amass_npz

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clips", nargs="+", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    for clip in args.clips:
        for c in all_corruptions(read_amass_npz(clip)):
            write_amass_npz(c.seq, args.output / f"{c.seq.name}.npz")
            print(f"{c.seq.name}: frames {c.frames[0]}-{c.frames[1]}, meant for {c.expected_check}")


if __name__ == "__main__":
    main()
