"""Thresholds of the retargeting metrics (one frozen config, recorded next to every report)."""

from __future__ import annotations

from dataclasses import dataclass, field

from retarget.contacts import ContactConfig


@dataclass(frozen=True)
class MetricsConfig:
    """How the retargeting metrics decide what counts as a defect."""

    floating_threshold_m: float = 0.02
    """A frame "floats" when the human has a foot in stance but the robot's lowest sole point is higher than
    this above the floor [m]. 2 cm is four times the sole-sphere radius (5 mm): clearly off the ground, yet
    below a normal swing-foot clearance."""
    self_collision_depth_m: float = 0.01
    """Self-contacts deeper than this count as a self-collision frame [m] (issue 3's target)."""
    joint_limit_tolerance_rad: float = 1e-4
    """Joint angles beyond a URDF limit by more than this are violations [rad]; the tolerance absorbs
    float32 rounding of angles that a solver clamped exactly to the limit."""
    velocity_limit_tolerance_rad_s: float = 1e-6
    """Joint speeds above the URDF velocity limit by more than this are violations [rad/s]."""
    heel_raise_tolerance_m: float = 0.01
    """A human stance foot counts as flat (for ``stance_tilt_flat_deg``) while its ankle stands no more than this
    above its flat-foot height [m]; above it the heel is raised (the ball of the foot)."""
    contacts: ContactConfig = field(default_factory=ContactConfig)
    """Human stance detector (stance frames are taken from the source clip, never from the robot)."""
