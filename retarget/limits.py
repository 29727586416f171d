"""Size limits checked before allocating, so a hostile or mistaken file is refused, not fatal.

A clip's frame count after resampling (``--fps 1e6``, a 0.1 Hz source, a BVH ``Frame Time: 1e6``),
the element count of any array a file declares (an ``.npz`` header, a pickle asking numpy for an
array) and the size and nesting of pickled containers are bounded here, and only here. The
defaults suit every real clip seen (the longest AMASS clips are a few minutes at 120 Hz, under
50 000 frames) while keeping the worst case far below a desktop's memory; people who mean it raise
them with the environment variables below or the CLI's ``--max-frames`` / ``--max-elements``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from retarget.errors import MotionFileError

MAX_FRAMES_ENV = "ASAP_RETARGET_MAX_FRAMES"
MAX_ELEMENTS_ENV = "ASAP_RETARGET_MAX_ELEMENTS"


@dataclass(frozen=True)
class Limits:
    """Bounds on what a file may make this package allocate."""

    max_frames: int = 200_000
    """Frames of one motion, read or after resampling (1.9 h at 30 Hz, 14 min at 240 Hz)."""
    max_elements: int = 100_000_000
    """Elements of one array declared by a file (800 MB as float64), and of all arrays of one pickle."""
    max_container_items: int = 10_000_000
    """Items of all lists, tuples and dicts of one pickle, counting shared ones each time they are reached."""
    max_depth: int = 64
    """Nesting depth of containers in a pickle (a motion library needs 4)."""


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = int(float(text))
    except ValueError as exc:
        raise MotionFileError(None, f"environment variable {name}={text!r} is not a number") from exc
    if value < 1:
        raise MotionFileError(None, f"environment variable {name}={text!r} must be at least 1")
    return value


def current_limits() -> Limits:
    """The defaults, with :data:`MAX_FRAMES_ENV` and :data:`MAX_ELEMENTS_ENV` applied."""
    base = Limits()
    return Limits(
        max_frames=_env_int(MAX_FRAMES_ENV, base.max_frames),
        max_elements=_env_int(MAX_ELEMENTS_ENV, base.max_elements),
        max_container_items=base.max_container_items,
        max_depth=base.max_depth,
    )


def frames_after_resampling(num_frames: int, fps_in: float, fps_out: float) -> int:
    """How many frames a clip of `num_frames` at `fps_in` [Hz] has at `fps_out` [Hz] (covering its duration)."""
    duration_s = (num_frames - 1) / fps_in
    # The small epsilon keeps the last sample when duration is an exact multiple of the step.
    count = math.floor(duration_s * fps_out + 1e-9) + 1 if math.isfinite(duration_s * fps_out) else math.inf
    return count  # type: ignore[return-value]


def check_frames(num_frames: float, path: str | Path | None, what: str) -> None:
    """Refuse a motion of more than ``max_frames`` frames; `what` says where the count comes from."""
    limit = current_limits().max_frames
    if not num_frames <= limit:  # also NaN
        count = f"{num_frames:.3g}" if isinstance(num_frames, float) else str(num_frames)
        raise MotionFileError(
            path,
            f"{what} gives {count} frames, more than the limit of {limit}; check the frame rates, "
            f"or raise the limit with --max-frames or {MAX_FRAMES_ENV} if you mean it",
        )


def check_elements(shape: tuple[int, ...], path: str | Path | None, what: str) -> None:
    """Refuse an array of more than ``max_elements`` elements before it is allocated."""
    limit = current_limits().max_elements
    count = math.prod(int(n) for n in shape)
    if count > limit:
        raise MotionFileError(
            path,
            f"{what} declares shape {tuple(shape)} ({count:.3g} elements), more than the limit of {limit}; "
            f"the file is corrupt or hostile, or raise the limit with --max-elements or {MAX_ELEMENTS_ENV}",
        )
