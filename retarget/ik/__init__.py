"""Inverse kinematics: the robot's root pose and joint angles that follow the scaled human targets.

Per-frame IK (mink + DAQP) lives in :mod:`retarget.ik.frame`; whole-sequence Gauss-Newton IK in
:mod:`retarget.ik.sequence`, its compiled residual/normal-equation loops in :mod:`retarget.ik.kernel` and the
assembly of its problem from a clip's targets and contacts in :mod:`retarget.ik.problem`.

The per-frame solver's names are re-exported lazily, so importing one submodule (e.g. :mod:`retarget.ik.kernel`)
does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robots.lazy_exports import lazy_exports

__all__ = ["FrameByFrameIK", "IkConfig"]
__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "retarget.ik.frame"))

if TYPE_CHECKING:
    from retarget.ik.frame import FrameByFrameIK, IkConfig
