"""One entry point for every human clip a command takes: AMASS ``.npz``, joint positions
``.npz``, BVH, and the result files of the video-pose estimators GVHMR (``.pt``), WHAM
(``.pkl``) and TRAM (``hps_track_<k>.npy`` or its sequence folder), told apart by extension
and content. Video-pose results are low-passed against frame jitter (:mod:`retarget.smoothing`);
every clip then goes through :func:`retarget.floor.level_sequence`, which levels and grounds a
tilted world frame and leaves a level one exactly as it is.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from retarget.errors import ConfigError, MotionFileError
from retarget.floor import FloorConfig, FloorEstimate, level_sequence
from retarget.readers.video_tracks import UP_AXES, VideoTrack, choose_track, track_to_sequence
from retarget.smoothing import VIDEO_CUTOFF_HZ, smooth_sequence
from retarget.smpl_sequence import SmplSequence

VIDEO_FORMATS: tuple[str, ...] = ("gvhmr", "wham", "tram")
CLIP_FORMATS: tuple[str, ...] = ("amass", "joints", "bvh") + VIDEO_FORMATS
CLIP_SUFFIXES: tuple[str, ...] = (".npz", ".bvh", ".pt", ".pkl", ".npy")
"""File extensions a human clip may have (a TRAM sequence folder is a clip too)."""
DEFAULT_VIDEO_FPS = 30.0
"""Frame rate assumed for WHAM and TRAM results, which do not store the video's [Hz]."""


@dataclass(frozen=True)
class SourceOptions:
    """How a human clip is read."""

    person: int | None = None
    """Track id in a multi-person result file (WHAM, TRAM folder); None: the longest track."""
    video_fps: float | None = None
    """Frame rate of the video behind a WHAM/TRAM/GVHMR result [Hz]; None: GVHMR's 30, else 30 (announced)."""
    up_axis: str | None = None
    """World up axis of a video result, 'y' or 'z'; None: the estimator's documented one (y for all three)."""
    level_floor: bool = True
    """Estimate the floor from the planted feet and level and ground a tilted clip (see retarget.floor)."""
    floor: FloorConfig = field(default_factory=FloorConfig)
    """Floor estimation thresholds."""
    smooth_hz: float | None = None
    """Low-pass cut-off against video jitter [Hz]; None: retarget.smoothing.VIDEO_CUTOFF_HZ for GVHMR, WHAM
    and TRAM results, off for other clips; 0: off."""

    def __post_init__(self) -> None:
        if self.up_axis is not None and self.up_axis not in UP_AXES:
            raise ConfigError(f"unknown up axis {self.up_axis!r}; valid choices: {', '.join(UP_AXES)}")
        if self.video_fps is not None and not self.video_fps > 0:
            raise ConfigError(f"video frame rate must be positive, got {self.video_fps}")
        if self.smooth_hz is not None and not self.smooth_hz >= 0:
            raise ConfigError(f"smoothing cut-off must be 0 (off) or positive, got {self.smooth_hz}")


@dataclass(frozen=True)
class LoadedClip:
    """A human clip as read, and what the user should be told about it."""

    seq: SmplSequence
    fmt: str
    """One of CLIP_FORMATS."""
    notes: tuple[str, ...] = ()
    """Lines for the user: the person chosen, gaps filled, the assumed frame rate, the floor correction."""
    floor: FloorEstimate | None = None
    """The floor estimate (None when levelling is off)."""


def detect_clip_format(path: str | Path) -> str:
    """The format of a human clip, from its extension and, where needed, its content."""
    path = Path(path)
    from retarget.readers import tram

    if path.is_dir():
        if tram.is_tram_folder(path):
            return "tram"
        raise MotionFileError(path, f"is a folder but not a TRAM result (needs {tram.CAMERA_FILE} and hps/)")
    if not path.is_file():
        raise MotionFileError(path, "file does not exist")
    ext = path.suffix.lower()
    if ext == ".npz":
        # A damaged or disguised file goes to the AMASS reader, whose messages say what is wrong with it.
        try:
            with zipfile.ZipFile(path) as archive:
                return "joints" if "joints_w.npy" in archive.namelist() else "amass"
        except (zipfile.BadZipFile, OSError):
            return "amass"
    formats = {".bvh": "bvh", ".pt": "gvhmr", ".pkl": "wham", ".npy": "tram"}
    if ext not in formats:
        raise MotionFileError(
            path,
            f"unknown clip extension {ext!r}; known: .npz (AMASS, joint positions), .bvh, .pt (GVHMR), "
            ".pkl (WHAM), .npy (TRAM track) or a TRAM folder",
        )
    return formats[ext]


def video_format_of(path: str | Path) -> str | None:
    """'gvhmr', 'wham' or 'tram' when `path` is a video-pose result, else None (a .pkl motion library, say)."""
    from retarget.readers import tram
    from retarget.readers.wham import is_wham_file

    path = Path(path)
    if tram.is_tram_folder(path) or (path.suffix.lower() == ".npy" and path.is_file()):
        return "tram"
    if path.suffix.lower() == ".pt" and path.is_file():
        return "gvhmr"
    if path.suffix.lower() == ".pkl" and path.is_file() and is_wham_file(path):
        return "wham"
    return None


def read_tracks(path: str | Path, fmt: str | None = None) -> dict[int, VideoTrack]:
    """Every tracked person of a video-pose result file."""
    path = Path(path)
    fmt = fmt or detect_clip_format(path)
    try:
        return _read_tracks(path, fmt)
    except (ValueError, TypeError, IndexError) as exc:  # arrays of unexpected types or ranks
        raise MotionFileError(path, f"not a readable {fmt} result ({type(exc).__name__}: {exc})") from exc


def _read_tracks(path: Path, fmt: str) -> dict[int, VideoTrack]:
    if fmt == "gvhmr":
        from retarget.readers.gvhmr import read_gvhmr_tracks

        return read_gvhmr_tracks(path)
    if fmt == "wham":
        from retarget.readers.wham import read_wham_tracks

        return read_wham_tracks(path)
    if fmt == "tram":
        from retarget.readers.tram import read_tram_tracks

        return read_tram_tracks(path)
    raise MotionFileError(path, f"a {fmt} clip has no tracks; tracks are in {', '.join(VIDEO_FORMATS)} results")


def _clip_name(path: Path, fmt: str, track_id: int, num_tracks: int) -> str:
    if fmt == "tram":
        seq_folder = path if path.is_dir() else path.parent.parent if path.parent.name == "hps" else path.parent
        return f"{seq_folder.name}_track{track_id}"
    return path.stem if num_tracks == 1 else f"{path.stem}_person{track_id}"


def _read_video(path: Path, fmt: str, options: SourceOptions) -> tuple[SmplSequence, list[str]]:
    from retarget.readers import gvhmr, tram, wham

    tracks = read_tracks(path, fmt)
    track, note = choose_track(path, tracks, options.person)
    notes = [note] if note else []
    fps = options.video_fps
    if fps is None:
        fps = gvhmr.FPS if fmt == "gvhmr" else DEFAULT_VIDEO_FPS
        if fmt != "gvhmr":
            notes.append(f"{fmt} results do not store the video's frame rate: assuming {fps:g} Hz (--video-fps)")
    up_axis = options.up_axis or {"gvhmr": gvhmr.UP_AXIS, "wham": wham.UP_AXIS, "tram": tram.UP_AXIS}[fmt]
    name = _clip_name(path, fmt, track.track_id, len(tracks))
    seq, more = track_to_sequence(path, track, fps, up_axis, name)
    return seq, notes + more


def load_clip(path: str | Path, options: SourceOptions = SourceOptions(), fmt: str | None = None) -> LoadedClip:
    """Read any human clip, level its floor, and say what was done."""
    path = Path(path)
    fmt = fmt or detect_clip_format(path)
    if fmt not in CLIP_FORMATS:
        raise ConfigError(f"unknown clip format {fmt!r}; valid choices: {', '.join(CLIP_FORMATS)}")
    notes: list[str] = []
    if fmt in VIDEO_FORMATS:
        seq, notes = _read_video(path, fmt, options)
    else:
        if options.person not in (None, 0):
            raise MotionFileError(path, f"no person {options.person}: a {fmt} clip holds one person (0)")
        seq = _read_single(path, fmt)
    if seq.num_frames == 0:
        raise MotionFileError(path, "has zero frames")
    cutoff_hz = (
        options.smooth_hz if options.smooth_hz is not None else (VIDEO_CUTOFF_HZ if fmt in VIDEO_FORMATS else 0.0)
    )
    if cutoff_hz > 0:
        seq = smooth_sequence(seq, cutoff_hz)
        notes.append(f"low-passed at {cutoff_hz:g} Hz against video jitter (--smooth-hz 0: off)")
    floor = None
    if options.level_floor:
        seq, floor = level_sequence(seq, options.floor)
        notes.append(floor.message)
    return LoadedClip(seq=seq, fmt=fmt, notes=tuple(notes), floor=floor)


def _read_single(path: Path, fmt: str) -> SmplSequence:
    if fmt == "bvh":
        from retarget.readers.bvh_smpl import read_bvh_as_smpl

        return read_bvh_as_smpl(path)
    if fmt == "joints":
        from retarget.readers.joint_positions import read_joint_positions_as_smpl

        return read_joint_positions_as_smpl(path)
    from retarget.readers.amass import read_amass_npz

    return read_amass_npz(path)


def read_clip(path: str | Path, options: SourceOptions = SourceOptions()) -> SmplSequence:
    """The clip of :func:`load_clip`, without the notes."""
    return load_clip(path, options).seq
