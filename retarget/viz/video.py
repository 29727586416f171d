"""Write rendered frames to a video (H.264 MP4 through imageio-ffmpeg) or an animated image.

imageio-ffmpeg's wheel carries a static ffmpeg binary (with libx264), so encoding needs no
system package and no download; frames are piped to it, so memory stays flat for long clips.
Animated WebP/GIF previews (for the HTML report) are written with Pillow.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from retarget.errors import ConfigError
from retarget.viz.files import write_shared

VIDEO_SUFFIXES: dict[str, str] = {".mp4": "mp4", ".mkv": "matroska", ".mov": "mov"}
IMAGE_SUFFIXES: tuple[str, ...] = (".webp", ".gif")


def _write_ffmpeg(tmp: Path, frames: Iterable[np.ndarray], fps: float, container: str, crf: int) -> int:
    import imageio_ffmpeg

    writer = None
    count = 0
    try:
        for frame in frames:
            if writer is None:
                height, width = frame.shape[:2]
                writer = imageio_ffmpeg.write_frames(
                    str(tmp),
                    (width, height),
                    fps=fps,
                    codec="libx264",
                    pix_fmt_out="yuv420p",
                    macro_block_size=2,
                    quality=None,
                    # -f: the temporary name has no video suffix; faststart: playable while downloading.
                    output_params=["-crf", str(crf), "-f", container, "-movflags", "+faststart"],
                    ffmpeg_log_level="error",
                )
                writer.send(None)  # start the generator
            writer.send(np.ascontiguousarray(frame))
            count += 1
    finally:
        if writer is not None:
            writer.close()
    return count


def _write_animated(tmp: Path, frames: Iterable[np.ndarray], fps: float, fmt: str) -> int:
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    if not images:
        return 0
    duration_ms = round(1000.0 / fps)
    extra = {"quality": 70, "method": 4} if fmt == "WEBP" else {"optimize": True}
    images[0].save(tmp, format=fmt, save_all=True, append_images=images[1:], duration=duration_ms, loop=0, **extra)
    return len(images)


def write_video(path: str | Path, frames: Iterable[np.ndarray], fps: float, crf: int = 23) -> int:
    """Encode (H, W, 3) uint8 frames to `path` (.mp4/.mkv/.mov, or animated .webp/.gif) atomically.

    Returns the number of frames written. `crf` is x264's constant rate factor (lower = better).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in VIDEO_SUFFIXES and suffix not in IMAGE_SUFFIXES:
        valid = ", ".join([*VIDEO_SUFFIXES, *IMAGE_SUFFIXES])
        raise ConfigError(f"{path}: unknown video type {suffix!r}; valid choices: {valid}")
    if not fps > 0:
        raise ConfigError(f"{path}: fps must be positive, got {fps}")
    written = [0]

    def write(tmp: Path) -> None:
        if suffix in VIDEO_SUFFIXES:
            written[0] = _write_ffmpeg(tmp, frames, fps, VIDEO_SUFFIXES[suffix], crf)
        else:
            written[0] = _write_animated(tmp, frames, fps, suffix[1:].upper())
        if written[0] == 0:
            raise ConfigError(f"{path}: no frames to write")

    write_shared(path, write)
    return written[0]


def write_still(path: str | Path, frame: np.ndarray) -> Path:
    """One (H, W, 3) uint8 frame as a PNG, atomically."""
    from PIL import Image

    write_shared(Path(path), lambda tmp: Image.fromarray(frame).save(tmp, format="PNG"))
    return Path(path)


def read_video_frames(path: str | Path) -> tuple[np.ndarray, float]:
    """(N, H, W, 3) uint8 frames and the frame rate of a video (for tests and checks)."""
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = reader.__next__()
    width, height = meta["size"]
    frames = [np.frombuffer(buf, dtype=np.uint8).reshape(height, width, 3) for buf in reader]
    return np.stack(frames), float(meta["fps"])
