"""Read BVH motion capture: the joint tree, the channels, and world joint poses per frame.

Conventions (BVH's, made explicit here):
* Each joint's rotation channels compose in the order listed: ``Zrotation Yrotation Xrotation``
  means R = Rz · Ry · Rx (intrinsic), angles in degrees.
* A joint with position channels takes them as its translation from the parent (they replace
  the OFFSET; in practice only the root has them). Others translate by their OFFSET.
* ``End Site`` blocks become leaf joints named ``<parent>_end`` (no channels).
* The file is y-up (the BVH convention). World poses are returned z-up in metres, through the
  proper rotation Rx(+90°) (y → z, z → −y), which never mirrors; the length unit is an explicit
  option (:class:`BvhConfig`), checked against a plausible human leg length.

Units: BVH has no unit field. The CMU files converted from ASF (e.g. ``cmu_01_01.bvh``) are in
CMU's ASF unit, 1/0.45 inch = 0.05644 m (their thigh is 7.2 units); other exporters use
centimetres. :data:`UNITS_M` lists the named units.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.errors import ConfigError, MotionFileError

UNITS_M: dict[str, float] = {"m": 1.0, "cm": 0.01, "mm": 0.001, "inch": 0.0254, "cmu": 0.0254 / 0.45}
"""Metres per BVH unit, by name ('cmu': the CMU ASF length unit, 1/0.45 inch)."""

# Y-up BVH world → z-up world: Rx(+90°).
_CHANNEL_NAMES = frozenset(f"{axis}{kind}" for axis in "XYZ" for kind in ("position", "rotation"))
Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


@dataclass(frozen=True)
class BvhConfig:
    """How to interpret a BVH file."""

    unit: str = "cm"
    """Length unit of the file, one of :data:`UNITS_M` ('cmu' for CMU ASF-converted files)."""
    leg_length_range_m: tuple[float, float] = (0.5, 1.3)
    """Plausible rest hip→knee→ankle length [m]; outside it the unit is refused as wrong."""

    def __post_init__(self) -> None:
        if self.unit not in UNITS_M:
            raise ConfigError(f"unknown BVH unit {self.unit!r}; valid choices: {', '.join(UNITS_M)}")


@dataclass(frozen=True)
class BvhMotion:
    """A BVH clip as world joint poses (z-up, metres)."""

    name: str
    joint_names: tuple[str, ...]
    parents: np.ndarray
    """(J,) parent index per joint, -1 for the root."""
    offsets_m: np.ndarray
    """(J, 3) [m] rest offset from the parent, in the BVH (y-up) frame."""
    positions_w: np.ndarray
    """(T, J, 3) [m] joint positions in the z-up world."""
    rest_to_world: np.ndarray
    """(T, J, 3, 3) global joint rotations mapping a vector of the joint's rest frame (BVH axes,
    y-up) to the z-up world: Rx(90°) · R_global."""
    fps: float

    @property
    def num_frames(self) -> int:
        return int(self.positions_w.shape[0])

    def index(self, name: str) -> int:
        return self.joint_names.index(name)


@dataclass
class _Joint:
    name: str
    parent: int
    offset: np.ndarray
    channels: list[str]


def _parse(path: Path, text: str) -> tuple[list[_Joint], np.ndarray, float]:
    tokens = text.split()
    joints: list[_Joint] = []
    stack: list[int] = []
    i = 0

    def expect(word: str) -> None:
        nonlocal i
        if i >= len(tokens) or tokens[i] != word:
            found = tokens[i] if i < len(tokens) else "end of file"
            raise MotionFileError(path, f"malformed BVH: expected {word!r}, found {found!r}")
        i += 1

    try:
        expect("HIERARCHY")
        while tokens[i] != "MOTION":
            word = tokens[i]
            if word in ("ROOT", "JOINT", "End"):
                name = f"{joints[stack[-1]].name}_end" if word == "End" else tokens[i + 1]
                i += 2
                expect("{")
                expect("OFFSET")
                offset = np.array([float(t) for t in tokens[i : i + 3]])
                i += 3
                channels: list[str] = []
                if tokens[i] == "CHANNELS":
                    count = int(tokens[i + 1])
                    channels = tokens[i + 2 : i + 2 + count]
                    i += 2 + count
                    unknown = [c for c in channels if c not in _CHANNEL_NAMES]
                    if unknown:
                        raise MotionFileError(
                            path,
                            f"malformed BVH: joint {name!r} has unknown channels {unknown}; "
                            "expected X/Y/Z position and rotation channels",
                        )
                if any(j.name == name for j in joints):
                    # Joints are looked up by name (skeleton maps, the joints a retarget follows): a second
                    # joint of the same name would silently stand for the first.
                    clash = (
                        f"the End Site of {joints[stack[-1]].name!r} gets the name {name!r} of another joint"
                        if word == "End"
                        else f"two joints are named {name!r}"
                    )
                    raise MotionFileError(path, f"malformed BVH: {clash} in the HIERARCHY; joint names must be unique")
                joints.append(_Joint(name, stack[-1] if stack else -1, offset, channels))
                stack.append(len(joints) - 1)
            elif word == "}":
                stack.pop()
                i += 1
            else:
                raise MotionFileError(path, f"malformed BVH: unexpected {word!r} in the hierarchy")
        expect("MOTION")
        expect("Frames:")
        num_frames = int(tokens[i])
        i += 1
        expect("Frame")
        expect("Time:")
        frame_time = float(tokens[i])
        values = np.array(tokens[i + 1 :], dtype=np.float64)
    except (IndexError, ValueError) as exc:
        raise MotionFileError(path, f"malformed or truncated BVH ({type(exc).__name__}: {exc})") from exc
    num_channels = sum(len(j.channels) for j in joints)
    if num_frames <= 0 or values.size != num_frames * num_channels:
        raise MotionFileError(
            path,
            f"expected {num_frames} frames × {num_channels} channels = {num_frames * num_channels} "
            f"values, found {values.size}",
        )
    if not np.isfinite(values).all() or not frame_time > 0:
        raise MotionFileError(path, "NaN/inf motion values or a non-positive frame time")
    return joints, values.reshape(num_frames, num_channels), frame_time


def _frame_rate(frame_time_s: float) -> float:
    """1 / frame time, snapped to the integer rate the printed time was rounded from: files
    print ``.0083333`` for 120 Hz, which is 120.0005 Hz taken literally."""
    fps = 1.0 / frame_time_s
    nearest = round(fps)
    return float(nearest) if nearest > 0 and abs(1.0 / nearest - frame_time_s) < 5e-7 else fps


def read_bvh(path: str | Path, config: BvhConfig = BvhConfig()) -> BvhMotion:
    """Parse a BVH file and compute world joint poses in every frame."""
    path = Path(path)
    if not path.is_file():
        raise MotionFileError(path, "file does not exist")
    # scipy.spatial costs 0.2-0.4 s to import: only BVH reading loads it, not every retargeting process.
    from scipy.spatial.transform import Rotation

    joints, frames, frame_time = _parse(path, path.read_text(errors="replace"))
    scale = UNITS_M[config.unit]
    num_frames, num_joints = len(frames), len(joints)
    rot_g = np.empty((num_frames, num_joints, 3, 3))
    pos = np.empty((num_frames, num_joints, 3))
    col = 0
    for j, joint in enumerate(joints):
        ch = joint.channels
        data = frames[:, col : col + len(ch)]
        col += len(ch)
        rot_axes = "".join(c[0].upper() for c in ch if c.endswith("rotation"))
        rot_vals = data[:, [k for k, c in enumerate(ch) if c.endswith("rotation")]]
        local = Rotation.from_euler(rot_axes, rot_vals, degrees=True).as_matrix() if rot_axes else np.eye(3)
        pos_idx = {c[0].upper(): k for k, c in enumerate(ch) if c.endswith("position")}
        trans = np.tile(joint.offset, (num_frames, 1))
        for a, axis in enumerate("XYZ"):
            if axis in pos_idx:
                trans[:, a] = data[:, pos_idx[axis]]
        if joint.parent < 0:
            rot_g[:, j] = local
            pos[:, j] = trans
        else:
            rot_g[:, j] = rot_g[:, joint.parent] @ local
            pos[:, j] = pos[:, joint.parent] + np.einsum("tab,tb->ta", rot_g[:, joint.parent], trans)
    motion = BvhMotion(
        name=path.stem,
        joint_names=tuple(j.name for j in joints),
        parents=np.array([j.parent for j in joints]),
        offsets_m=np.array([j.offset for j in joints]) * scale,
        positions_w=(pos * scale) @ Y_UP_TO_Z_UP.T,
        rest_to_world=Y_UP_TO_Z_UP @ rot_g,
        fps=_frame_rate(frame_time),
    )
    return motion
