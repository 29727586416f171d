"""The whole-sequence IK's Gauss-Newton pass compiled ahead of time: solving without numba at run time.

numba's JIT costs every process about 0.4 s before the first pass runs, even with its on-disk cache warm:
~0.12 s to import numba and ~0.28 s on the first call of any compiled function (numba loads its typing
and lowering registries then, which also import ``scipy.linalg``): two thirds of the retargeter's start-up.
numba's ahead-of-time compiler (``numba.pycc``) turns the same code, :func:`retarget.ik.gauss_newton.solve_pass_flat`,
into an ordinary extension module that imports in under a millisecond and needs only numpy.

The module is built once per version of the compiled sources and per CPU (it is compiled for the host's
instruction set), into ``retarget/ik/__pycache__`` or, where that is not writable, ``~/.cache/asap-retarget``:
by the first process that solves a clip (30-60 s once, like numba's own cold cache; it needs numba and a
C/C++ compiler), or ahead of time with ``python -m retarget.ik.aot``. Where it cannot be built,
:func:`pass_function` warns and returns numba's JIT version (same code, same results).
``ASAP_RETARGET_AOT=0``: always the JIT version, nothing built.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

try:
    import fcntl
except ImportError:  # not on Windows: builds are not serialized there
    fcntl = None  # type: ignore[assignment]

_HERE = Path(__file__).resolve().parent
_SOURCES = ("pass_inputs.py", "banded.py", "kernel.py", "gauss_newton.py", "compiled_cache.py", "aot.py")
"""The files whose code ends up in the compiled module: any change makes a new one."""
ENV_SWITCH = "ASAP_RETARGET_AOT"


def _cpu_key() -> bytes:
    """What the host's instruction set depends on (the module is compiled for it)."""
    found: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as cpuinfo:  # the first processor's lines (all cores are alike)
            for line in cpuinfo:
                key = line.split(":", 1)[0].strip()
                if key in ("model name", "flags"):
                    found.setdefault(key, line)
                if len(found) == 2 or not line.strip():
                    break
    except OSError:
        pass
    return (found.get("model name", platform.machine()) + found.get("flags", platform.processor())).encode()


def module_name() -> str:
    """Name of the compiled module for these sources, this CPU and this Python."""
    digest = hashlib.sha256(_cpu_key())
    for name in _SOURCES:
        digest.update((_HERE / name).read_bytes())
    digest.update(sys.version.encode())
    return f"gauss_newton_aot_{digest.hexdigest()[:20]}"


def _directories() -> list[Path]:
    """Where the module is looked for and built, in order."""
    return [_HERE / "__pycache__", Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "asap-retarget"]


def _file_name(name: str) -> str:
    return name + importlib.machinery.EXTENSION_SUFFIXES[0]


def _switched_on() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


def _load_module(directories: list[Path] | None = None) -> ModuleType | None:
    """The ahead-of-time compiled module from the first of `directories` (default: the cache directories) that
    holds it, or None."""
    name = module_name()
    for directory in directories or _directories():
        path = directory / _file_name(name)
        if not path.is_file():
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return None


def load_compiled(directories: list[Path] | None = None) -> Callable | None:
    """The ahead-of-time compiled ``solve_pass_flat`` from the first of `directories` (default: the cache
    directories) that holds it, or None."""
    module = _load_module(directories)
    return None if module is None else module.solve_pass_flat


@functools.cache
def _compiled_module() -> ModuleType | None:
    """The compiled module (built here if it is not yet), or None where it is switched off or cannot be built.
    Looked up once per process."""
    if not _switched_on():
        return None
    module = _load_module()
    if module is None:
        try:
            module = _build_once()
        except Exception as exc:  # noqa: BLE001 (any failure of the optional build falls back to the JIT)
            warnings.warn(
                f"building the compiled Gauss-Newton module failed ({type(exc).__name__}: {exc}); "
                f"using numba's JIT (about 0.4 s more start-up per process; {ENV_SWITCH}=0 skips the build)",
                RuntimeWarning,
                stacklevel=3,
            )
    return module


@functools.cache
def pass_function() -> Callable:
    """The Gauss-Newton pass (flat arguments, see :data:`retarget.ik.gauss_newton.FLAT_SIGNATURE`): the compiled
    module's, else numba's JIT version. Looked up once per process."""
    module = _compiled_module() if _switched_on() else None
    if module is not None:
        return module.solve_pass_flat
    from retarget.ik.gauss_newton import solve_pass_flat

    return solve_pass_flat


@functools.cache
def forward_function() -> Callable:
    """The solver's forward kinematics of a clip (flat arguments, see
    :data:`retarget.ik.gauss_newton.FORWARD_SIGNATURE`): the compiled module's, else numba's JIT version."""
    module = _compiled_module() if _switched_on() else None
    if module is not None:
        return module.tracked_forward_flat
    from retarget.ik.gauss_newton import tracked_forward_flat

    return tracked_forward_flat


def _build_once() -> ModuleType | None:
    """Build the module unless another process is building it (batch workers start together): the first one
    builds under an exclusive lock on the cache directory, the others wait for it and load its module."""
    lock_dir = next((d for d in _directories() if _writable(d)), None)
    if lock_dir is None or fcntl is None:
        return _load_module([build().parent])
    with open(lock_dir / ".gauss_newton_aot.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        module = _load_module()
        if module is None:
            print(
                "building the compiled Gauss-Newton solver for this machine, once (30-60 s)...",
                file=sys.stderr,
                flush=True,
            )
            module = _load_module([build().parent])
        return module


def _writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


def build(directories: list[Path] | None = None) -> Path:
    """Compile the module (numba.pycc, for this CPU) into the first writable of `directories` (default: the
    cache directories); returns its path. Written under a temporary name and renamed, so concurrent builds and
    readers never see half a file."""
    with warnings.catch_warnings():
        # pycc is "pending deprecation" (its successor is not released); the JIT remains the fallback.
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        from numba.pycc import CC

    from retarget.ik.gauss_newton import FLAT_SIGNATURE, FORWARD_SIGNATURE, solve_pass_flat, tracked_forward_flat

    name = module_name()
    errors = []
    for directory in directories or _directories():
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=directory) as tmp:
                cc = CC(name)
                cc.output_dir = tmp
                cc.target_cpu = "host"
                cc.verbose = False
                cc.export("solve_pass_flat", FLAT_SIGNATURE)(solve_pass_flat.py_func)
                cc.export("tracked_forward_flat", FORWARD_SIGNATURE)(tracked_forward_flat.py_func)
                cc.compile()
                final = directory / _file_name(name)
                os.replace(Path(tmp) / cc.output_file, final)
            if directory == _HERE / "__pycache__":
                # Modules of earlier sources in this installation's own folder will never load again (~1 MB each).
                for old in directory.glob("gauss_newton_aot_*"):
                    if old != final:
                        old.unlink(missing_ok=True)
            return final
        except OSError as exc:
            errors.append(f"{directory}: {exc}")
    raise OSError("could not write the compiled Gauss-Newton module: " + "; ".join(errors))


if __name__ == "__main__":
    print(build())
