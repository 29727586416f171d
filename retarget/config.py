"""The resolved configuration of a retargeting run (written next to every output)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field

from retarget.contacts import ContactConfig
from retarget.errors import ConfigError
from retarget.ik.frame import IkConfig
from retarget.ik.sequence import SequenceIkConfig
from retarget.readers.source import SourceOptions

SOLVERS = ("sequence", "per_frame")


@dataclass(frozen=True)
class RetargetConfig:
    """What a retargeting run does with each clip."""

    robot: str = "g1_23dof"
    """Bundled robot name (see ``robots.ROBOT_NAMES``)."""
    fps_out: float = 30.0
    """Output frame rate [Hz]; the source is resampled (slerp/lerp) to it."""
    body_model_dir: str | None = None
    """Folder with the user's SMPL/SMPL-H/SMPL-X model files; None uses the built-in neutral skeleton."""
    solver: str = "sequence"
    """'sequence': contact-aware whole-sequence IK (default); 'per_frame': mink IK frame by frame with one
    clip-wide ground offset (the GMR-style approach, kept for comparison)."""
    sequence_ik: SequenceIkConfig = field(default_factory=SequenceIkConfig)
    """Whole-sequence IK weights and iterations."""
    contacts: ContactConfig = field(default_factory=ContactConfig)
    """Human foot-stance detection thresholds."""
    ik: IkConfig = field(default_factory=IkConfig)
    """Per-frame IK weights and stopping rules (solver='per_frame')."""
    source: SourceOptions = field(default_factory=SourceOptions)
    """How the clip file is read: person, video frame rate, up axis, floor levelling."""

    def __post_init__(self) -> None:
        if self.solver not in SOLVERS:
            raise ConfigError(f"unknown solver {self.solver!r}; valid choices: {', '.join(SOLVERS)}")
        if not self.fps_out > 0:
            raise ConfigError(f"output frame rate must be positive, got {self.fps_out}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def digest(self) -> str:
        """Short hash of the resolved config, recorded beside outputs."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]
