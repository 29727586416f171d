"""The resolved configuration of a retargeting run (written next to every output)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field

from retarget.ik import IkConfig


@dataclass(frozen=True)
class RetargetConfig:
    """What a retargeting run does with each clip."""

    robot: str = "g1_23dof"
    """Bundled robot name (see ``robots.ROBOT_NAMES``)."""
    fps_out: float = 30.0
    """Output frame rate [Hz]; the source is resampled (slerp/lerp) to it."""
    body_model_dir: str | None = None
    """Folder with the user's SMPL/SMPL-H/SMPL-X model files; None uses the built-in neutral skeleton."""
    ik: IkConfig = field(default_factory=IkConfig)
    """Per-frame IK weights and stopping rules."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def digest(self) -> str:
        """Short hash of the resolved config, recorded beside outputs."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]
