"""The documented public API: cheap to import, every name resolves, and the documented example runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import retarget
import robots
import trainers

REPO = Path(__file__).resolve().parents[1]
MARKER = "<!-- example: tested -->"


@pytest.mark.parametrize("package", [retarget, trainers, robots])
def test_every_public_name_resolves_and_is_listed(package):
    assert package.__all__ == sorted(set(package.__all__))
    assert set(package.__all__) == set(getattr(package, "_EXPORTS", package.__all__))
    for name in package.__all__:
        assert getattr(package, name) is not None
        assert name in dir(package)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        package.not_a_name  # noqa: B018


def test_importing_the_roots_loads_nothing_heavy():
    code = (
        "import sys, retarget, trainers, robots\n"
        "print(sorted(m for m in ('numpy', 'mujoco', 'torch', 'pinocchio', 'scipy', 'numba') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


def _tested_examples() -> list[tuple[str, str]]:
    blocks = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = page.read_text()
        for i, m in enumerate(re.finditer(re.escape(MARKER) + r"\s*```python\n(.*?)```", text, re.DOTALL)):
            blocks.append((f"{page.name}#{i}", m.group(1)))
    return blocks


def test_the_api_page_has_a_tested_example():
    assert any(name.startswith("api.md") for name, _ in _tested_examples())


@pytest.mark.parametrize(("name", "code"), _tested_examples(), ids=[n for n, _ in _tested_examples()])
def test_documented_example_runs(name, code, tmp_path):
    (tmp_path / "motions_raw").symlink_to(REPO / "motions_raw")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 0, f"{name}:\n{out.stderr[-3000:]}"
    if "squat.pkl" in code:
        (loaded,) = retarget.read_motions(tmp_path / "squat.pkl")
        assert loaded.motion.dof_pos.shape == (158, 23)
        assert re.search(r"158 frames at 30 fps, matched points \d+ mm", out.stdout), out.stdout
