"""Named "real" robots: deliberate differences from the nominal MuJoCo G1 that a delta action can absorb.

There is no G1 here, so — as ASAP's sim-to-sim experiments did — a second simulator plays the
real robot. Each profile is a typed, frozen config saying exactly what it changes; it is
applied to a *copy* of the nominal model (:func:`trainers.real.model.build_real_model`), never
to the training model itself.

* ``soft_ankles``: ankle Kp × 0.65, ASAP's own test. The correct Δa is known in closed form
  (:mod:`trainers.delta.analytic`), which makes it the test oracle of the delta model.
* ``delay``: PD targets reach the joints one policy step (20 ms = 4 physics steps) late.
* ``friction``: dry friction and viscous damping in every joint, and 80 % of the rated torque.
* ``soft_ankles_delay``: the two above that the bench-log target of the issue names.
* ``combined``: soft ankles, a 10 ms delay, friction, torque limits and a heavier torso.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from retarget.errors import AsapRetargetError

OTHER_ENGINE = "pybullet"
"""Prefix of a profile played by another physics engine (:mod:`trainers.real.pybullet_engine`)."""
ANKLE_SUFFIXES: tuple[str, ...] = ("ankle_pitch_joint", "ankle_roll_joint")


class UnknownProfileError(AsapRetargetError):
    """A "real" profile name that does not exist."""


@dataclass(frozen=True)
class RealProfile:
    """What a "real" G1 changes relative to the nominal simulator (identity by default)."""

    name: str
    """Profile name (as given to ``--real``)."""
    description: str
    """One line for listings and log provenance."""
    kp_scale: tuple[tuple[str, float], ...] = ()
    """(joint-name suffix, multiplier) pairs for the PD stiffness Kp; joints not named keep theirs."""
    kd_scale: tuple[tuple[str, float], ...] = ()
    """(joint-name suffix, multiplier) pairs for the PD damping Kd."""
    delay_physics_steps: int = 0
    """PD targets take effect this many physics steps (5 ms each) after they are sent."""
    frictionloss_nm: float = 0.0
    """Dry (Coulomb) friction added to every actuated joint [N·m]."""
    damping_nms: float = 0.0
    """Viscous damping added to every actuated joint [N·m·s/rad] (on top of the PD's Kd)."""
    effort_limit_scale: float = 1.0
    """Multiplier of the URDF torque limits that clip the PD torque."""
    torso_mass_offset_kg: float = 0.0
    """Mass added to the torso link [kg] (a battery or a sensor pack; no effect on a fixed-base bench)."""
    engine: str = "mujoco"
    """Physics engine that plays this robot: ``"mujoco"`` (a copy of the training model) or ``"pybullet"``
    (:mod:`trainers.real.pybullet_engine`; the profile name is then ``pybullet:<profile>``)."""

    def kp_multiplier(self, joint_name: str) -> float:
        return _lookup(self.kp_scale, joint_name)

    def kd_multiplier(self, joint_name: str) -> float:
        return _lookup(self.kd_scale, joint_name)


def _lookup(table: tuple[tuple[str, float], ...], joint_name: str) -> float:
    for suffix, value in table:
        if joint_name.endswith(suffix):
            return value
    return 1.0


SOFT_ANKLE_KP_RATIO = 0.65
"""ASAP's soft-ankle test: the real ankles have 65 % of the nominal stiffness."""

_SOFT_ANKLES = tuple((s, SOFT_ANKLE_KP_RATIO) for s in ANKLE_SUFFIXES)

DEFAULT_REAL_PROFILE = "soft_ankles_delay"
"""The "real" G1 of every command and library function unless told otherwise: 65 % ankle stiffness and a
one-step actuation delay, the combination the README's loop results use."""

PROFILES: dict[str, RealProfile] = {
    p.name: p
    for p in (
        RealProfile("nominal", "the training simulator itself (no change)"),
        RealProfile("soft_ankles", "ankle pitch/roll Kp x 0.65", kp_scale=_SOFT_ANKLES),
        RealProfile("delay", "PD targets 20 ms (one policy step) late", delay_physics_steps=4),
        RealProfile(
            "friction",
            "0.3 N·m dry friction, 0.2 N·m·s/rad damping per joint, 80 % torque limits",
            frictionloss_nm=0.3,
            damping_nms=0.2,
            effort_limit_scale=0.8,
        ),
        RealProfile(
            "soft_ankles_delay",
            "ankle Kp x 0.65 and PD targets 20 ms late",
            kp_scale=_SOFT_ANKLES,
            delay_physics_steps=4,
        ),
        RealProfile(
            "combined",
            "ankle Kp x 0.65, 10 ms delay, 0.3 N·m friction, 0.2 N·m·s/rad damping, 80 % torque, torso +2 kg",
            kp_scale=_SOFT_ANKLES,
            delay_physics_steps=2,
            frictionloss_nm=0.3,
            damping_nms=0.2,
            effort_limit_scale=0.8,
            torso_mass_offset_kg=2.0,
        ),
    )
}


def save_profile(profile: RealProfile, path: str | Path) -> Path:
    """Write a profile as JSON (what system identification produces), atomically."""
    from retarget.asap_pkl import atomic_write

    text = json.dumps(asdict(profile), indent=2)
    atomic_write(Path(path), lambda tmp: tmp.write_text(text))
    return Path(path)


def load_profile_file(path: str | Path) -> RealProfile:
    """A profile from a JSON file written by :func:`save_profile`."""
    try:
        data = json.loads(Path(path).read_text())
        for key in ("kp_scale", "kd_scale"):
            data[key] = tuple((str(s), float(v)) for s, v in data.get(key, ()))
        return RealProfile(**data)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise UnknownProfileError(f"{path}: not a real-profile JSON file ({exc})") from exc


def get_profile(name: str | RealProfile) -> RealProfile:
    """The profile called ``name``, or read from ``name`` if it ends in ``.json`` (a profile passes through).
    ``pybullet:<profile>`` (``pybullet`` alone: ``pybullet:nominal``) is ``<profile>`` played by PyBullet.

    Raises :class:`UnknownProfileError`.
    """
    if isinstance(name, RealProfile):
        return name
    head, sep, tail = str(name).partition(":")
    if head == OTHER_ENGINE:
        base = get_profile(tail if sep and tail else "nominal")
        return replace(
            base,
            name=f"{OTHER_ENGINE}:{base.name}",
            description=f"{base.description}, in PyBullet",
            engine=OTHER_ENGINE,
        )
    if str(name).endswith(".json"):
        return load_profile_file(name)
    if name not in PROFILES:
        raise UnknownProfileError(
            f"unknown real profile {name!r}; valid choices: {', '.join(PROFILES)}, or {OTHER_ENGINE}:<one of them>"
        )
    return PROFILES[name]
