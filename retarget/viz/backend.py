"""Headless OpenGL for MuJoCo: pick a back-end that works without a display or a GPU.

MuJoCo decides its GL back-end from ``MUJOCO_GL`` when ``mujoco`` is first imported, and
PyOpenGL binds to one platform when it is first imported, so a process cannot try EGL,
fail, and then switch to OSMesa. We therefore probe each back-end once in a short child
process (about 0.5 s), remember the answer in ``MUJOCO_GL`` (children inherit it), and
create the context in-process from ``mujoco.egl`` or ``mujoco.osmesa`` directly.

Order: an explicit ``MUJOCO_GL=egl|osmesa`` wins; else EGL (Mesa's ``libegl-mesa0`` gives a
software llvmpipe device on a machine with no GPU, and the GPU where there is one); else
OSMesa (Debian's ``libosmesa6``, installed by ``scripts/install_system_deps.sh``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache

from retarget.errors import AsapRetargetError

BACKENDS: tuple[str, ...] = ("egl", "osmesa")

_PROBE = "import sys\nfrom mujoco.{name} import GLContext\nctx = GLContext(16, 16)\nctx.make_current()\nctx.free()\n"


class RenderBackendError(AsapRetargetError):
    """No headless OpenGL back-end could be opened."""


def _probe(name: str) -> str | None:
    """None when `name` opens a context in a child process, else the reason it failed."""
    env = dict(os.environ, MUJOCO_GL=name, PYOPENGL_PLATFORM=name)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE.format(name=name)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit code {proc.returncode}"


@lru_cache(maxsize=1)
def select_backend() -> str:
    """The GL back-end this process renders with: 'egl' or 'osmesa'."""
    for var in ("MUJOCO_GL", "PYOPENGL_PLATFORM"):
        value = os.environ.get(var, "").strip().lower()
        if value in BACKENDS:
            return value
        if var == "MUJOCO_GL" and value and value not in ("", "glfw"):
            raise RenderBackendError(f"MUJOCO_GL={value!r} is not a headless back-end; valid choices: egl, osmesa")
    reasons = {}
    for name in BACKENDS:
        reason = _probe(name)
        if reason is None:
            os.environ["MUJOCO_GL"] = name
            return name
        reasons[name] = reason
    detail = "; ".join(f"{k}: {v}" for k, v in reasons.items())
    raise RenderBackendError(
        f"no headless OpenGL back-end works ({detail}). Install one with `sudo bash scripts/install_system_deps.sh` "
        "(Debian: libegl-mesa0 for MUJOCO_GL=egl, libosmesa6 for MUJOCO_GL=osmesa)."
    )


def create_gl_context(width_px: int, height_px: int):
    """An OpenGL context (made current) able to hold a `width_px` × `height_px` offscreen buffer."""
    name = select_backend()
    os.environ.setdefault("PYOPENGL_PLATFORM", name)
    if os.environ["PYOPENGL_PLATFORM"].lower() != name:
        raise RenderBackendError(
            f"PyOpenGL is bound to {os.environ['PYOPENGL_PLATFORM']!r} but MUJOCO_GL={name!r}; set both to one value"
        )
    try:
        if name == "egl":
            from mujoco.egl import GLContext
        else:
            from mujoco.osmesa import GLContext
        ctx = GLContext(width_px, height_px)
        ctx.make_current()
    except Exception as exc:  # the GL stacks raise many types; the user needs one message
        raise RenderBackendError(f"cannot open a {name} OpenGL context: {type(exc).__name__}: {exc}") from exc
    return ctx
