"""Shared test fixtures: paths to the vendored real data (see tests/fixtures/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMPL_DIR = FIXTURES / "smpl_video"
ASAP_REF_DIR = FIXTURES / "asap_reference"
ASAP_KEY_PREFIX = "0-motions_raw_tairantestbed_smpl_"


def smpl_clip(name: str) -> Path:
    """Path of a vendored SMPL clip, e.g. smpl_clip('walk_level1_filter')."""
    return SMPL_DIR / f"video_{name}_amass.npz"


def asap_reference(name: str) -> Path:
    """Path of the official ASAP retarget of the same clip."""
    return ASAP_REF_DIR / f"{ASAP_KEY_PREFIX}video_{name}_amass.pkl"


def all_clip_names() -> list[str]:
    return sorted(p.name[len("video_") : -len("_amass.npz")] for p in SMPL_DIR.glob("*.npz"))


@pytest.fixture(scope="session")
def g1():
    from robots import load_robot_spec

    return load_robot_spec("g1_23dof")


@pytest.fixture(scope="session")
def g1_mj_model(g1):
    from robots.mujoco_model import build_mujoco_model

    return build_mujoco_model(g1)


@pytest.fixture(scope="session")
def tiny_kick_policy(tmp_path_factory) -> Path:
    """A one-iteration tracking policy of the kick (4 envs): a real checkpoint for the benches' end-to-end tests.
    Read-only for its users (the benches copy what they fine-tune)."""
    from click.testing import CliRunner

    from cli.main import main

    run = tmp_path_factory.mktemp("tiny_kick") / "pre"
    kick = str(asap_reference("kick_level2_filter"))
    out = CliRunner().invoke(
        main, ["train", "track", "--motion", kick, "-o", str(run), "--iterations", "1", "--num-envs", "4"]
    )
    assert out.exit_code == 0, out.output
    return run
