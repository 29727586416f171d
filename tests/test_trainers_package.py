"""The generic top-level names of this project resolve to its own folders, not to same-named packages elsewhere."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["trainers", "cli", "robots", "retarget"])
def test_top_level_package_is_this_projects_folder(name):
    module = importlib.import_module(name)
    assert Path(module.__file__).resolve().parent == REPO / name


def test_trainers_subpackage_is_installed_with_it():
    ppo = importlib.import_module("trainers.ppo")
    assert Path(ppo.__file__).resolve().parent == REPO / "trainers" / "ppo"
