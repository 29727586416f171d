"""One clip through the controller: retarget, filter with the controller layer, performed motion out.

:func:`perform_clip` is what a downstream job calls to get the motion the simulated G1 can perform
for a source clip: it writes that motion in any library format and its provenance JSON beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from retarget.asap_pkl import RobotMotion
from retarget.config import RetargetConfig
from retarget.controller.config import ControllerConfig
from retarget.controller.perform import Provenance, performed_motion, provenance, write_provenance
from retarget.controller.track import TrackingRun, tracker_model
from retarget.pipeline import RetargetResult
from retarget.smpl_sequence import SmplSequence
from robots.registry import load_robot_spec

if TYPE_CHECKING:  # retarget.filter's config holds a ControllerConfig: import it when called
    from retarget.filter.verdict import Verdict

CONTROLLER_LAYERS: tuple[str, ...] = ("kinematic", "controller")
"""The layers a controller verdict runs: the kinematic pre-screen and the tracker (the dynamic layer
would be overridden by the controller anyway, see ControllerConfig.overrides_dynamic)."""


@dataclass(frozen=True)
class PerformResult:
    """A clip's controller verdict and, unless rejected, the motion performed over its longest kept range."""

    verdict: Verdict
    run: TrackingRun
    motion: RobotMotion | None
    """None when the verdict is 'reject'."""
    provenance: Provenance | None


def perform_result(
    result: RetargetResult,
    seq: SmplSequence,
    config: ControllerConfig | None = None,
    robot_name: str = "g1_23dof",
    source_sha256: str = "",
    layers: tuple[str, ...] = CONTROLLER_LAYERS,
) -> PerformResult:
    """Controller verdict on a retargeted clip and its performed motion."""
    config = config or ControllerConfig()
    from retarget.filter.api import filter_result_and_run
    from retarget.filter.config import FilterConfig
    from retarget.filter.verdict import REJECT

    fcfg = FilterConfig(controller=replace(config, decides=True), layers=layers)
    verdict, run = filter_result_and_run(result, seq, fcfg, robot_name)
    assert run is not None  # the controller layer always runs here
    if verdict.decision == REJECT or not verdict.kept_ranges:
        return PerformResult(verdict, run, None, None)
    frame_range = verdict.kept_ranges[0]
    robot = load_robot_spec(robot_name)
    model = tracker_model(robot_name, config.tracker.physics_dt_s)
    motion = performed_motion(run, result.motion, robot, model, frame_range)
    prov = provenance(run, result.motion.name, result.motion.fps, frame_range, config, source_sha256)
    return PerformResult(verdict, run, motion, prov)


def perform_clip(
    source: str | Path,
    output: str | Path,
    fmt: str | None = None,
    config: ControllerConfig | None = None,
    retarget_config: RetargetConfig | None = None,
) -> PerformResult:
    """Retarget an AMASS-layout clip, track it, and write the performed motion to `output` (format from
    `fmt` or the extension) with `<output>.controller.json` beside it. A rejected clip writes nothing."""
    from retarget.batch.record import file_sha256
    from retarget.formats.registry import write_motion
    from retarget.pipeline import retarget_sequence
    from retarget.readers.amass import read_amass_npz

    retarget_config = retarget_config or RetargetConfig()
    source = Path(source)
    seq = read_amass_npz(source)
    sha = file_sha256(source)
    result = retarget_sequence(seq, retarget_config)
    out = perform_result(result, seq, config, retarget_config.robot, sha)
    if out.motion is not None and out.provenance is not None:
        write_motion(output, out.motion, load_robot_spec(retarget_config.robot), fmt)
        write_provenance(provenance_path(output), out.provenance, out.run.targets)
    return out


def provenance_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".controller.json")
