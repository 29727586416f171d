"""Whole-body centre of mass of an SMPL body from its joint positions.

Segment masses (fraction of body mass) and the location of each segment's centre of mass along it (fraction of
its length from the proximal end) are de Leva's adjustments of the Zatsiorsky-Seluyanov parameters
(P. de Leva, "Adjustments to Zatsiorsky-Seluyanov's segment inertia parameters", J. Biomechanics 29(9),
1223-1230, 1996, Table 4), the mean of his female and male figures: the clips use SMPL's neutral body.
His segments end at joint centres and landmarks; SMPL has joints only, so three ends are stood in for:

- trunk, suprasternale to the mid-hip point: the suprasternale is the midpoint of SMPL's two collar joints
  (``L_Thorax``, ``R_Thorax``), which sit on either side of the sternum's top;
- head and neck: its centre of mass (half-way between vertex and cervicale in de Leva's table) at SMPL's
  ``Head`` joint, which sits inside the skull at about that height;
- foot, heel to toe tip: its centre of mass (40-44 % from the heel) at the midpoint of the ankle and toe
  (ball of the foot) joints; the hand, wrist to third knuckle, ends at SMPL's ``Hand`` joint.

The flight cue (:func:`retarget.floor_cues.flight_cue`) reads the centre of mass: in a jump it alone falls at
g, while the pelvis also moves with the legs tucking and swinging under it.
"""

from __future__ import annotations

import numpy as np

# (proximal joints, distal joints, mass fraction [-] female / male, centre of mass from proximal [-] female / male);
# each end is the mean of its SMPL joints.
_SEGMENTS: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[float, float], tuple[float, float]], ...] = (
    ((13, 14), (1, 2), (0.4257, 0.4346), (0.4151, 0.4486)),  # trunk: suprasternale -> mid-hip
    ((15,), (15,), (0.0668, 0.0694), (0.0, 0.0)),  # head and neck, at the head joint
    ((16,), (18,), (0.0255, 0.0271), (0.5754, 0.5772)),  # left upper arm: shoulder -> elbow
    ((17,), (19,), (0.0255, 0.0271), (0.5754, 0.5772)),
    ((18,), (20,), (0.0138, 0.0162), (0.4559, 0.4574)),  # left forearm: elbow -> wrist
    ((19,), (21,), (0.0138, 0.0162), (0.4559, 0.4574)),
    ((20,), (22,), (0.0056, 0.0061), (0.7474, 0.7900)),  # left hand: wrist -> third knuckle (SMPL hand joint)
    ((21,), (23,), (0.0056, 0.0061), (0.7474, 0.7900)),
    ((1,), (4,), (0.1478, 0.1416), (0.3612, 0.4095)),  # left thigh: hip -> knee
    ((2,), (5,), (0.1478, 0.1416), (0.3612, 0.4095)),
    ((4,), (7,), (0.0481, 0.0433), (0.4416, 0.4459)),  # left shank: knee -> ankle
    ((5,), (8,), (0.0481, 0.0433), (0.4416, 0.4459)),
    ((7,), (10,), (0.0129, 0.0137), (0.5, 0.5)),  # left foot: ankle -> toe joint, at the midpoint
    ((8,), (11,), (0.0129, 0.0137), (0.5, 0.5)),
)


def _com_weights() -> np.ndarray:
    """(24,) weight of each SMPL joint in the whole-body centre of mass (they sum to 1)."""
    weights = np.zeros(24)
    for proximal, distal, mass, along in _SEGMENTS:
        m, a = float(np.mean(mass)), float(np.mean(along))
        for j in proximal:
            weights[j] += m * (1.0 - a) / len(proximal)
        for j in distal:
            weights[j] += m * a / len(distal)
    return weights / weights.sum()


COM_WEIGHTS = _com_weights()
"""(24,) the centre of mass as a weighted sum of the SMPL joints: segments' masses times their positions."""
COM_JOINTS: tuple[int, ...] = tuple(int(j) for j in np.flatnonzero(COM_WEIGHTS))
"""The SMPL joints the centre of mass reads (all but the spine's three and the neck)."""


def body_com_w(joints_w: np.ndarray) -> np.ndarray:
    """(T, 3) [m] whole-body centre of mass of SMPL joints (T, 24, 3) [m]."""
    return np.einsum("j,tjk->tk", COM_WEIGHTS, joints_w)
