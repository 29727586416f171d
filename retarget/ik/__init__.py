"""Inverse kinematics: the robot's root pose and joint angles that follow the scaled human targets.

Per-frame IK (mink + DAQP) lives in :mod:`retarget.ik.frame`; whole-sequence Gauss-Newton IK in
:mod:`retarget.ik.sequence`, the assembly of its problem from a clip's targets and contacts in
:mod:`retarget.ik.problem`. Its iterations run as compiled code: the normal equations in
:mod:`retarget.ik.kernel`, the banded Cholesky in :mod:`retarget.ik.banded`, a whole pass of steps in
:mod:`retarget.ik.gauss_newton` (inputs in :mod:`retarget.ik.pass_inputs`), compiled ahead of time by
:mod:`retarget.ik.aot` so that solving needs no numba at run time.

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
