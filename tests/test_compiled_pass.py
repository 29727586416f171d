"""The Gauss-Newton pass compiled ahead of time (retarget.ik.aot) against numba's JIT version, what a
retargeting process loads with it, and the cache keys that keep compiled callers in step with their callees."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import smpl_clip

from retarget.ik import aot
from retarget.ik.gauss_newton import solve_pass_flat
from retarget.ik.sequence import WholeSequenceIK

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compiled_directory(tmp_path_factory):
    """A fresh directory holding the module built from the current sources (the build itself is under test)."""
    directory = tmp_path_factory.mktemp("aot")
    path = aot.build([directory])
    assert path.parent == directory and path.name.startswith(aot.module_name())
    return directory


@pytest.fixture(scope="module")
def compiled_pass(compiled_directory):
    function = aot.load_compiled([compiled_directory])
    assert function is not None
    return function


def test_compiled_clip_kinematics_equal_the_jit_ones(g1, compiled_directory, monkeypatch):
    """The module's second entry point (the clip's forward kinematics) gives what numba's JIT version gives."""
    from test_sequence_ik import _random_states

    from retarget.ik.gauss_newton import tracked_forward_flat
    from retarget.ik.problem import _kinematics_for

    module = aot._load_module([compiled_directory])
    assert module is not None
    kin, layout = _kinematics_for(g1)
    state = _random_states(g1, 9, seed=4)
    results = []
    for function in (module.tracked_forward_flat, tracked_forward_flat):
        monkeypatch.setattr("retarget.ik.sequence.forward_function", lambda f=function: f)
        solver = WholeSequenceIK(kin, layout, g1.lower_rad, g1.upper_rad)
        results.append(solver.forward(*state))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-13)
    np.testing.assert_allclose(results[0][0], kin.forward(*state)[0][:, : layout.num_points], atol=1e-12)


def test_compiled_pass_equals_the_jit_pass_on_a_real_clip(g1, compiled_pass, monkeypatch):
    """Same iterations and the same solution (to rounding) on a clip with floor, collision and limit rows."""
    from test_sequence_ik import _captured_problem

    problem, fps = _captured_problem("SpiderMan_level2")
    results = {}
    for name, function in (("aot", compiled_pass), ("jit", solve_pass_flat)):
        monkeypatch.setattr("retarget.ik.sequence.pass_function", lambda f=function: f)
        solver = WholeSequenceIK(problem.kinematics, problem.layout, g1.lower_rad, g1.upper_rad)
        results[name] = solver.solve(problem.targets, fps, problem.initial_state)
    (aot_state, aot_iterations), (jit_state, jit_iterations) = results["aot"], results["jit"]
    assert aot_iterations == jit_iterations > 5
    for a, b in zip(aot_state, jit_state, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9)


def test_a_retargeting_process_with_the_module_loads_neither_numba_nor_scipy_linalg(compiled_pass):
    code = textwrap.dedent(
        f"""
        import sys
        from retarget.ik import aot
        from retarget.pipeline import retarget_file
        assert aot.pass_function().__module__.startswith("gauss_newton_aot_"), aot.pass_function()
        retarget_file({str(smpl_clip("walk_level1_filter"))!r})
        print(sorted(m for m in ("numba", "scipy.linalg", "joblib", "mujoco", "threadpoolctl") if m in sys.modules))
        """
    )
    directory = Path(aot.__file__).parent / "__pycache__"
    built = directory / aot._file_name(aot.module_name())
    if not built.exists():  # the fixture built it elsewhere; the process looks here first
        aot.build([directory])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


def test_switching_the_module_off_gives_the_jit_pass(monkeypatch):
    monkeypatch.setenv(aot.ENV_SWITCH, "0")
    aot.pass_function.cache_clear()
    try:
        assert aot.pass_function() is solve_pass_flat
    finally:
        aot.pass_function.cache_clear()


def test_module_name_follows_every_compiled_source(tmp_path, monkeypatch):
    """An edit of any file whose code is compiled in gives a new module name (so a stale module is never loaded)."""
    names = set()
    for edited in (None, *aot._SOURCES):
        copy = tmp_path / (edited or "original")
        copy.mkdir()
        for source in aot._SOURCES:
            text = (Path(aot.__file__).parent / source).read_text()
            (copy / source).write_text(text + ("\n# edited\n" if source == edited else ""))
        monkeypatch.setattr(aot, "_HERE", copy)
        names.add(aot.module_name())
    assert len(names) == 1 + len(aot._SOURCES)


def test_a_cached_caller_recompiles_when_a_callee_module_changes(tmp_path):
    """numba alone keys a cached function on its own file only; stamped, the caller follows its callee's file."""
    package = tmp_path / "stamped"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "callee.py").write_text("import numba\n@numba.njit(cache=True)\ndef value():\n    return 1.0\n")
    (package / "caller.py").write_text(
        textwrap.dedent(
            """
            import sys
            import numba
            from retarget.ik.compiled_cache import stamp_with_sources
            from stamped import callee

            @numba.njit(cache=True)
            def call():
                return callee.value()

            stamp_with_sources(sys.modules[__name__], (callee,))
            """
        )
    )
    env_path = f"{tmp_path}:{REPO}"
    run = ["env", f"PYTHONPATH={env_path}", sys.executable, "-c", "from stamped.caller import call; print(call())"]
    assert subprocess.run(run, capture_output=True, text=True, check=True).stdout.strip() == "1.0"
    (package / "callee.py").write_text("import numba\n@numba.njit(cache=True)\ndef value():\n    return 2.0\n")
    assert subprocess.run(run, capture_output=True, text=True, check=True).stdout.strip() == "2.0"


def test_the_factorisation_is_compiled_with_the_slp_vectorizer():
    """The panel kernel's accumulators are packed into vector registers by LLVM's SLP vectorizer (off in numba by
    default): switched on by importing the banded module, before anything in it is compiled."""
    code = "from numba.core import config; import retarget.ik.banded; print(config.SLP_VECTORIZE)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "1"
