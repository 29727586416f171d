"""PyBullet worlds stepped in worker processes: :class:`PybulletBatch`'s interface, its work on several cores.

A PyBullet robot costs about 15× a MuJoCo one per policy step (``bench/bench_pybullet_cost.py``), nearly all of it
inside PyBullet's ``stepSimulation``, one world after another. :class:`PybulletWorkers` splits the ``nsim`` worlds
into contiguous shares, each owned by a worker process holding its own :class:`PybulletBatch`; a step sends every
worker its targets, lets them step at the same time and gathers the joint and root states. The MuJoCo kinematic
mirror that observations and rewards read stays in the calling process. The worlds are the same as a
:class:`PybulletBatch`'s, stepped in the same order within each, so the states are identical bit for bit.

The tracking environment gets it for a PyBullet robot with ``num_threads`` > 1 (``--threads``), one worker per
thread; with one thread it keeps the single-process batch.
"""

from __future__ import annotations

import multiprocessing
from typing import Any

import mujoco
import mujoco.batch
import numpy as np

from trainers.real.pybullet_engine import MIRRORED, MirroredBatchState, PybulletBatch, mirror_kinematics

_STATE = ("qpos", "qvel", "actuator_force")


def _serve(conn: Any, model: mujoco.MjModel, nsim: int) -> None:
    """Worker loop: own ``nsim`` PyBullet worlds and answer the parent's commands until told to close."""
    batch = PybulletBatch(model, nsim)
    conn.send("ready")
    while True:
        command, *args = conn.recv()
        if command == "close":
            conn.close()
            return
        if command == "forward":
            local, qpos, qvel, ctrl = args
            for key, value in zip(("qpos", "qvel", "ctrl"), (qpos, qvel, ctrl)):
                batch.bind(key)[local] = value
            batch.forward(local)
            conn.send(None)
        elif command == "step":
            nstep, ctrl = args
            batch.bind("ctrl")[:] = ctrl
            diverged = np.zeros(0, dtype=int)
            try:
                batch.step(nstep)
            except mujoco.batch.SimulationError as exc:
                diverged = np.asarray(exc.ids, dtype=int)
            conn.send((*(batch.bind(k) for k in _STATE), diverged))


class PybulletWorkers(MirroredBatchState):
    """``nsim`` PyBullet worlds over ``workers`` processes, with :class:`PybulletBatch`'s interface
    (:meth:`bind`, :meth:`reset`, :meth:`forward`, :meth:`step`, :meth:`expand`)."""

    def __init__(self, model: mujoco.MjModel, nsim: int, workers: int):
        self.model, self.nsim = model, int(nsim)
        self.shares = [s for s in np.array_split(np.arange(self.nsim), max(1, min(workers, self.nsim))) if s.size]
        self.data = [mujoco.MjData(model) for _ in range(self.nsim)]
        self._arrays = {
            k: np.stack([getattr(d, k) for d in self.data])
            for k in ("qpos", "qvel", "ctrl", *MIRRORED, "actuator_force", "history")
        }
        self._arrays["actuator_force"] = np.zeros((self.nsim, model.nu))
        # Spawned, not forked: a fork would copy the parent's threads and PyBullet/torch state.
        context = multiprocessing.get_context("spawn")
        self._conns, self._procs = [], []
        for share in self.shares:
            parent, child = context.Pipe()
            proc = context.Process(target=_serve, args=(child, model, share.size), daemon=True)
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        for conn in self._conns:
            if conn.recv() != "ready":
                raise RuntimeError("a PyBullet worker did not start")

    def forward(self, ids: np.ndarray | None = None, stage: object = None) -> None:
        """Push the bound state of ``ids`` into their workers' worlds and refresh their kinematics."""
        ids = np.arange(self.nsim) if ids is None else np.asarray(ids, dtype=int)
        sent = []
        for conn, share in zip(self._conns, self.shares):
            mine = ids[np.isin(ids, share)]
            if mine.size:
                a = self._arrays
                conn.send(("forward", mine - share[0], a["qpos"][mine], a["qvel"][mine], a["ctrl"][mine]))
                sent.append(conn)
        for conn in sent:
            conn.recv()
        for i in ids:
            mirror_kinematics(self.model, self.data[int(i)], self._arrays, int(i))

    def step(self, nstep: int = 1, stage: object = None) -> None:
        """As :meth:`PybulletBatch.step`, every worker stepping its worlds at the same time."""
        for conn, share in zip(self._conns, self.shares):
            conn.send(("step", nstep, self._arrays["ctrl"][share]))
        diverged = []
        for conn, share in zip(self._conns, self.shares):
            *state, bad = conn.recv()
            for key, value in zip(_STATE, state):
                self._arrays[key][share] = value
            diverged.extend(share[bad].tolist())
        for i in sorted(set(range(self.nsim)) - set(diverged)):
            mirror_kinematics(self.model, self.data[i], self._arrays, i)
        if diverged:
            raise mujoco.batch.SimulationError(np.array(diverged), "PyBullet state became non-finite")

    def close(self) -> None:
        for conn, proc in zip(self._conns, self._procs):
            if proc.is_alive():
                conn.send(("close",))
                proc.join(timeout=5)
        self._conns, self._procs = [], []

    def __del__(self) -> None:
        try:
            self.close()
        except (OSError, EOFError, BrokenPipeError):
            pass
