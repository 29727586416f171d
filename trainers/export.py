"""Export the actor (observation normalization + MLP) for deployment: ONNX or TorchScript, plus a sidecar.

The sidecar JSON carries what a deployment loop needs besides the network: joint order, the
observation layout, action scale and offset kind, default pose, PD gains and rates.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import torch

from retarget.asap_pkl import atomic_write
from robots.registry import load_robot_spec
from trainers.config import to_jsonable
from trainers.observations import frame_size
from trainers.policy_io import LoadedPolicy
from trainers.sim_model import default_joint_pos


def deployment_info(loaded: LoadedPolicy) -> dict:
    cfg = loaded.env_cfg
    robot = load_robot_spec(cfg.sim.robot)
    return {
        "checkpoint": str(loaded.checkpoint),
        "iteration": loaded.iteration,
        "joint_names": list(robot.joint_names),
        "obs_frame_size": frame_size(robot.num_dof),
        "obs_history_len": cfg.obs.history_len,
        "obs_layout": "frames newest first; frame = [base_ang_vel_b*ang_vel_scale(3), projected_gravity_b(3), "
        "dof_pos-default(D), dof_vel*dof_vel_scale(D), last_action(D), phase(1)]",
        "default_joint_pos_rad": default_joint_pos(robot).tolist(),
        "kp": robot.kp.tolist(),
        "kd": robot.kd.tolist(),
        "effort_limit_nm": robot.effort_limit_nm.tolist(),
        "sim": to_jsonable(cfg.sim),
        "obs": to_jsonable(cfg.obs),
    }


def export_actor(loaded: LoadedPolicy, output: str | Path) -> Path:
    """Write ``output`` (``.onnx`` or ``.pt`` TorchScript) and ``output.json`` beside it."""
    output = Path(output)
    actor = loaded.policy.actor.eval()
    example = torch.zeros(1, loaded.policy.actor.num_obs)
    if output.suffix == ".onnx":
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            # The TorchScript-based exporter needs no onnxscript; torch marks it deprecated.
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(
                actor,
                (example,),
                buffer,  # type: ignore[arg-type]  # dynamo=False writes to file objects; torch annotates paths only
                input_names=["obs"],
                output_names=["actions"],
                dynamic_axes={"obs": {0: "batch"}, "actions": {0: "batch"}},
                dynamo=False,
            )
        atomic_write(output, lambda tmp: tmp.write_bytes(buffer.getvalue()))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            scripted = torch.jit.trace(actor, example)
            atomic_write(output, lambda tmp: torch.jit.save(scripted, str(tmp)))
    sidecar = output.with_name(output.name + ".json")
    atomic_write(sidecar, lambda tmp: tmp.write_text(json.dumps(deployment_info(loaded), indent=2)))
    return output
