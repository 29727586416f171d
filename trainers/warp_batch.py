"""``WarpBatch``: the part of :class:`mujoco.batch.Batch`'s interface the tracking environment uses, played by
MuJoCo Warp (``mujoco_warp``) — all worlds in one set of Warp kernels, on a GPU (``cuda``) or Warp's CPU device.

The environment keeps reading and writing NumPy arrays (:meth:`bind`), so observations, rewards and
randomization are the same code as with MuJoCo's C batch. On the CPU device those arrays *are* Warp's memory;
on a GPU they are host mirrors, copied to the device before each :meth:`step` / :meth:`forward` and back after.

Semantics kept from the C batch: :meth:`step` runs ``nstep`` physics steps and then the position and velocity
stages, so kinematic outputs (``xpos``, ``cvel``, ...) describe the new state; ``actuator_force`` is the last
physics step's; a world whose state becomes non-finite is reported in :class:`mujoco.batch.SimulationError` after
the others ran to completion. :meth:`expand` gives a world-batched copy of a model field (domain randomization),
:meth:`set_const` re-derives the constants that depend on mass and centre of mass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from retarget.errors import AsapRetargetError
from trainers.c_output import c_output_silenced

BOUND = ("qpos", "qvel", "ctrl", "xpos", "xquat", "site_xpos", "cvel", "subtree_com", "actuator_force", "history")
"""Data arrays :meth:`WarpBatch.bind` provides (the ones the tracking environment and its subclasses read)."""

WRITTEN = ("qpos", "qvel", "ctrl", "history")
"""The bound arrays a caller may write: copied to the device before the physics on a GPU."""

EXPANDABLE = ("geom_friction", "body_mass", "body_ipos", "actuator_gainprm", "actuator_biasprm")
"""Model fields :meth:`WarpBatch.expand` makes per world (what :func:`trainers.randomization.randomize_batch`
edits); MuJoCo Warp indexes every such field by ``world % leading size``."""

CONST_FIELDS = ("body_subtreemass", "body_invweight0", "dof_invweight0", "body_inertia")
"""Fields :func:`mujoco_warp.set_const` derives from mass and CoM: made per world before it runs."""


class WarpEngineError(AsapRetargetError):
    """MuJoCo Warp is not installed, or cannot play this model."""


@dataclass(frozen=True)
class WarpConfig:
    """How the Warp engine runs."""

    device: str = "cpu"
    """Warp device: ``cpu`` (Warp's CPU backend, slow; for checks) or ``cuda`` / ``cuda:N``."""
    contacts_per_world: int = 48
    """Contact capacity per world. A G1 lying on the floor, thrashing, touches it in at most 27 places (C engine,
    both robots, random targets); MuJoCo Warp's own estimate for this model is 48 too."""
    host_mirrors: bool | None = None
    """Keep host copies of the bound arrays, synchronized around every call (None: only off the CPU device, where
    Warp's memory is not host memory). True on the CPU device runs a GPU's copy path on a CPU, for tests."""
    constraints_per_world: int = 0
    """Constraint-row capacity per world (0: 4 per contact, a pyramidal friction cone of condim 3, plus one per
    degree of freedom for joint limits; MuJoCo Warp's own estimate, 64, overflows on a fallen G1: 108-111 rows)."""


def import_warp() -> tuple[Any, Any]:
    """``(warp, mujoco_warp)``, initialized, or a one-line error naming the extra to install. Warp's probe for a
    CUDA driver (a warning on every machine without one) is not printed."""
    try:
        import mujoco_warp
        import warp
    except ImportError as exc:  # the engine is an optional extra
        raise WarpEngineError(
            f"the warp engine needs MuJoCo Warp: pip install -e '.[warp]' ({exc.name} is not installed)"
        ) from None
    warp.config.log_level = warp.LOG_WARNING  # no banner or per-module load lines
    with c_output_silenced():  # the CUDA probe's warnings; a device that is not there is reported by WarpBatch
        warp.init()
    return warp, mujoco_warp


def check_warp_device(device: str) -> None:
    """Refuse, in one line, a device Warp cannot use (or a machine without MuJoCo Warp) before any work starts."""
    warp, _ = import_warp()
    if device == "cpu":
        return
    try:
        with c_output_silenced():
            warp.get_device(device)
    except (RuntimeError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise WarpEngineError(
            f"--device {device}: Warp cannot use it ({first}); --device cpu runs Warp's CPU backend"
        ) from None


class WarpBatch:
    """``nsim`` worlds of ``model`` stepped by MuJoCo Warp (see the module's docstring)."""

    def __init__(self, model: mujoco.MjModel, nsim: int, cfg: WarpConfig | None = None):
        self.cfg = WarpConfig() if cfg is None else cfg
        self._wp, self._mjw = import_warp()
        self.model, self.nsim = model, int(nsim)
        mirrors = self.cfg.device != "cpu" if self.cfg.host_mirrors is None else self.cfg.host_mirrors
        self._host_is_device = not mirrors
        check_warp_device(self.cfg.device)
        with self._wp.ScopedDevice(self.cfg.device):
            try:
                self._m = self._mjw.put_model(model)
            except (NotImplementedError, ValueError) as exc:  # a MuJoCo feature MuJoCo Warp does not implement
                raise WarpEngineError(f"the warp engine cannot play this model: {exc}") from None
            # Overflows are read back and reported per world (step), not printed by the kernels.
            self._m.opt.warn_overflow = 0
            contacts = self.cfg.contacts_per_world
            rows = self.cfg.constraints_per_world or 4 * contacts + model.nv
            self._d = self._mjw.make_data(model, nworld=self.nsim, nconmax=contacts, njmax=rows)
        self._arrays: dict[str, np.ndarray] = {}
        for name in BOUND:
            if name == "history" and model.nhistory == 0:
                continue
            self._arrays[name] = self._host(getattr(self._d, name))
        self._expanded: dict[str, np.ndarray] = {}

    # --- host <-> device -------------------------------------------------------------------------
    def _host(self, array: Any) -> np.ndarray:
        """A NumPy view (CPU device) or copy (GPU) of a Warp array, shaped as MuJoCo's batch shapes it."""
        host = array.numpy() if self._host_is_device else np.array(array.numpy(), copy=True)
        if host.ndim == 1:  # an (nworld,) array of vectors comes back (nworld, k) already
            return host
        return host.reshape(array.shape[0], *array.shape[1:], *host.shape[array.ndim :])

    def _to_device(self, names: tuple[str, ...]) -> None:
        if self._host_is_device:
            return
        for name in names:
            if name in self._arrays:
                getattr(self._d, name).assign(self._arrays[name])
        for name, host in self._expanded.items():
            getattr(self._m, name).assign(host)

    def _from_device(self) -> None:
        if self._host_is_device:
            return
        for name, host in self._arrays.items():
            host[...] = getattr(self._d, name).numpy().reshape(host.shape)

    # --- the Batch interface ---------------------------------------------------------------------
    def bind(self, name: str) -> np.ndarray:
        """The (nsim, ...) array of data field ``name`` (one of :data:`BOUND`)."""
        if name not in self._arrays:
            raise WarpEngineError(f"the warp engine does not provide the data field {name!r}")
        return self._arrays[name]

    def expand(self, name: str) -> np.ndarray:
        """A per-world (nsim, ...) copy of model field ``name``, which the physics reads from now on."""
        if name not in EXPANDABLE + CONST_FIELDS:
            raise WarpEngineError(f"the warp engine cannot randomize the model field {name!r}")
        if name not in self._expanded:
            shared = getattr(self._m, name)
            per_world = np.repeat(shared.numpy()[:1], self.nsim, axis=0)
            batched = self._wp.array(per_world, dtype=shared.dtype, device=self.cfg.device)
            setattr(self._m, name, batched)
            self._expanded[name] = self._host(batched)
        return self._expanded[name]

    def set_const(self) -> None:
        """Re-derive subtree masses and inverse weights from the (randomized) masses and CoMs, world by world."""
        for name in CONST_FIELDS:
            self.expand(name)
        self._to_device(())
        with self._wp.ScopedDevice(self.cfg.device):
            self._mjw.set_const(self._m, self._d)
        self._from_device_model()

    def _from_device_model(self) -> None:
        if self._host_is_device:
            return
        for name, host in self._expanded.items():
            host[...] = getattr(self._m, name).numpy().reshape(host.shape)

    def reset(self, ids: np.ndarray, stage: object = None) -> None:
        """Worlds ``ids`` back to the model's default state (qpos0, zero velocities, controls and history)."""
        ids = np.asarray(ids, dtype=int)
        mask = np.zeros(self.nsim, dtype=bool)
        mask[ids] = True
        self._to_device(WRITTEN)
        with self._wp.ScopedDevice(self.cfg.device):
            self._mjw.reset_data(self._m, self._d, reset=self._wp.array(mask, dtype=bool))
        self._from_device()

    def forward(self, ids: np.ndarray | None = None, stage: object = None) -> None:
        """Position and velocity stages (kinematics, CoM, cvel) from the bound state; every world is refreshed,
        which changes nothing for worlds whose state was not edited."""
        self._to_device(WRITTEN)
        with self._wp.ScopedDevice(self.cfg.device):
            self._kinematics()
        self._from_device()

    def step(self, nstep: int = 1, stage: object = None) -> None:
        """``nstep`` physics steps of every world, then the kinematics of the new state.

        Raises :class:`mujoco.batch.SimulationError` naming the worlds whose state became non-finite or whose
        contacts or constraint rows did not fit since their last reset (the contact pool is shared by all worlds:
        when it overflows every world is named); the caller resets them."""
        self._to_device(WRITTEN)
        with self._wp.ScopedDevice(self.cfg.device):
            for _ in range(int(nstep)):
                self._mjw.step(self._m, self._d)
            self._kinematics()
        self._from_device()
        qpos, qvel = self._arrays["qpos"], self._arrays["qvel"]
        finite = np.isfinite(qpos).all(axis=1) & np.isfinite(qvel).all(axis=1)
        overflow = self._d.overflow.numpy() != 0  # contacts or constraint rows dropped: that world's physics is wrong
        bad = np.flatnonzero(~finite | overflow)
        if bad.size:
            import mujoco.batch

            what = "overflowed its contact capacity (WarpConfig.contacts_per_world)" if overflow.any() else ""
            what = " or ".join(w for w in ("became non-finite" if not finite.all() else "", what) if w)
            raise mujoco.batch.SimulationError(bad, f"MuJoCo Warp state {what}")

    def _kinematics(self) -> None:
        self._mjw.kinematics(self._m, self._d)
        self._mjw.com_pos(self._m, self._d)
        self._mjw.com_vel(self._m, self._d)
