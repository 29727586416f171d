"""Hostile inputs and output paths for every reader and command, generated small at test time.

Each :class:`FuzzCase` builds its files in an empty folder and returns the command line to run
and the file its one-line error must name. Used by tests/test_fuzz_inputs.py, which runs each
case and checks: exit code 1, one line naming the file, no traceback, nothing new or changed in
the folder. As a script it writes every case's files and prints the command lines:

    python tests/fuzz_inputs.py -o /tmp/fuzz
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pickle
import shutil
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from conftest import FIXTURES, asap_reference, smpl_clip

CLIP = "kick_level1_filter"
BVH = FIXTURES / "formats" / "bvh" / "cmu_01_01.bvh"
CSV = FIXTURES / "formats" / "g1_csv" / "output_jumpjack.csv"
BEYONDMIMIC = FIXTURES / "formats" / "beyondmimic_npz" / "sub3_largebox_003_mj.npz"
LOG_FRAMES = 25


@dataclass(frozen=True)
class Hostile:
    args: list[str]
    """The command line after `asap-retarget`."""
    names: Path | None
    """The file the one-line error must name (None: an option is wrong, and the line must name no file)."""
    says: str = ""
    """What else the line must name: the key or option at fault, or what is wrong."""


@dataclass(frozen=True)
class FuzzCase:
    name: str
    build: Callable[[Path], Hostile]
    memory: bool = False
    """Run in a subprocess under an address-space limit (the case would allocate gigabytes)."""


# ---------------------------------------------------------------- base files (real data, small)


def clip_npz(d: Path, name: str = "clip.npz", **overrides: object) -> Path:
    with np.load(smpl_clip(CLIP)) as npz:
        data = {k: npz[k] for k in npz.files}
    data.update(overrides)
    path = d / name
    with open(path, "wb") as fh:
        np.savez(fh, **data)
    return path


def ref_pkl(d: Path, name: str = "ref.pkl", **overrides: object) -> Path:
    path = d / name
    if not overrides:
        shutil.copy(asap_reference(CLIP), path)
        return path
    import joblib

    from retarget.safe_pickle import safe_load

    lib = safe_load(asap_reference(CLIP))
    (clip,) = lib.values()
    clip.update(overrides)
    joblib.dump(lib, path)
    return path


def pickle_file(d: Path, name: str, payload: bytes) -> Path:
    path = d / name
    path.write_bytes(payload)
    return path


def robot_log(d: Path, name: str = "log.npz", frames: int = LOG_FRAMES, **overrides: object) -> Path:
    """A robot log in the documented layout (trainers/delta/robot_log.py), then `overrides`."""
    from robots.registry import load_robot_spec

    names = load_robot_spec("g1_23dof").joint_names
    rng = np.random.default_rng(0)
    num_dof = len(names)
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (frames, 1))
    data: dict[str, object] = {
        "time_s": np.arange(frames) / 50.0,
        "fps": np.float64(50.0),
        "joint_names": np.array(names),
        "dof_pos": rng.normal(0, 0.1, (frames, num_dof)),
        "dof_vel": rng.normal(0, 0.1, (frames, num_dof)),
        "action": rng.normal(0, 0.1, (frames, num_dof)),
        "pd_target": rng.normal(0, 0.1, (frames, num_dof)),
        "root_pos_w": np.tile([0.0, 0.0, 0.79], (frames, 1)),
        "root_quat_w": quat,
        "root_lin_vel_w": np.zeros((frames, 3)),
        "root_ang_vel_w": np.zeros((frames, 3)),
        "motion_id": np.array("walk"),
    }
    data.update(overrides)
    path = d / name
    with open(path, "wb") as fh:
        np.savez(fh, **data)  # type: ignore[arg-type]
    return path


def short_bvh(d: Path, frame_time: str = ".0083333", channels: str | None = None) -> Path:
    head, motion = BVH.read_text().split("Frame Time:")
    rows = motion.strip().splitlines()[1:31]
    if channels is not None:
        head = head.replace("CHANNELS 3 Zrotation Yrotation Xrotation", channels, 1)
    path = d / "short.bvh"
    path.write_text(
        head.replace("Frames: 2752", f"Frames: {len(rows)}") + f"Frame Time: {frame_time}\n" + "\n".join(rows) + "\n"
    )
    return path


def npz_with_huge_header(d: Path, frames: int = 10**12) -> Path:
    """An AMASS-keyed .npz whose `poses` header claims (`frames`, 72) float64 over a few bytes of data."""
    path = d / "huge.npz"
    with zipfile.ZipFile(path, "w") as zf:
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (frames, 72)})
        zf.writestr("poses.npy", b"\x93NUMPY" + header.getvalue()[6:] + b"\0" * 64)
        for key, arr in (("trans", np.zeros((4, 3))), ("mocap_framerate", np.float64(30.0))):
            buf = io.BytesIO()
            np.save(buf, arr)
            zf.writestr(f"{key}.npy", buf.getvalue())
    return path


def shared_nested_lists() -> bytes:
    """A one-clip library whose `dof` is 10⁹ floats made of shared lists: tiny on disk, GiB once expanded."""
    row = [0.0] * 1000
    block = [row] * 1000
    clip = {
        "dof": [block] * 1000,
        "root_trans_offset": [[0.0] * 3],
        "pose_aa": [[[0.0] * 3]],
        "root_rot": [[0, 0, 0, 1.0]],
        "smpl_joints": [[[0.0] * 3]],
        "fps": 30,
    }
    return pickle.dumps({"clip": clip}, protocol=4)


def deep_nesting(depth: int = 200_000) -> bytes:
    """[[[[...]]]] nested `depth` deep: recursion in any reader that walks it."""
    return b"\x80\x04" + b"]" * depth + b"a" * (depth - 1) + b"."


def numpy_asks_1e13() -> bytes:
    """joblib's array wrapper asking numpy for 10¹³ float64 (80 TB) before any data is read."""
    from joblib.numpy_pickle import NumpyArrayWrapper

    return pickle.dumps(NumpyArrayWrapper(np.ndarray, (10**13,), "C", np.dtype("f8")), protocol=2)


def corrupt_compressed_npz(d: Path) -> Path:
    """A compressed AMASS clip whose `poses` member has damaged deflate data (the zip directory is intact)."""
    with np.load(smpl_clip(CLIP)) as npz:
        data = {k: npz[k] for k in npz.files}
    path = d / "compressed.npz"
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **data)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("poses.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 200
    raw[start : start + 64] = bytes(range(64))
    path.write_bytes(bytes(raw))
    return path


def policy_run(d: Path, config: str, checkpoint: bytes) -> Path:
    run = d / "run"
    run.mkdir()
    (run / "config.json").write_text(config)
    (run / "model_1.pt").write_bytes(checkpoint)
    return run


def torch_bytes(payload: object) -> bytes:
    import torch

    buf = io.BytesIO()
    torch.save(payload, buf)
    return buf.getvalue()


# ---------------------------------------------------------------- the cases


def _same_file(d: Path) -> Hostile:
    clip = clip_npz(d)
    return Hostile(["retarget", str(clip), "-o", str(clip)], clip)


def _convert_same(d: Path) -> Hostile:
    ref = ref_pkl(d)
    return Hostile(["convert", str(ref), str(ref)], ref)


def _convert_symlink_to_input(d: Path) -> Hostile:
    ref = ref_pkl(d)
    (d / "link.pkl").symlink_to(ref)
    return Hostile(["convert", str(ref), str(d / "link.pkl")], d / "link.pkl")


def _convert_hardlink_of_input(d: Path) -> Hostile:
    ref = ref_pkl(d)
    os.link(ref, d / "hard.pkl")
    return Hostile(["convert", str(ref), str(d / "hard.pkl")], d / "hard.pkl")


def _output_special(kind: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        ref = ref_pkl(d)
        out = d / "out.csv"
        if kind == "fifo":
            os.mkfifo(out)
        elif kind == "device":
            os.mknod(out, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a /dev/null of our own
        elif kind == "symlink":
            (d / "elsewhere.csv").write_text("keep me\n")
            out.symlink_to(d / "elsewhere.csv")
        elif kind == "directory":
            out.mkdir()
        return Hostile(["convert", str(ref), str(out)], out)

    return build


def _retarget_fps(d: Path) -> Hostile:
    clip = clip_npz(d)
    return Hostile(["retarget", str(clip), "-o", str(d / "out.pkl"), "--fps", "1e6"], clip)


def _retarget_slow_source(d: Path) -> Hostile:
    clip = clip_npz(d, mocap_framerate=np.float64(0.001))
    return Hostile(["retarget", str(clip), "-o", str(d / "out.pkl")], clip)


def _bvh_frame_time(d: Path) -> Hostile:
    bvh = short_bvh(d, frame_time="1e6")
    return Hostile(["convert", str(bvh), str(d / "out.npz"), "--bvh-unit", "cmu"], bvh)


def _asap_tiny_fps(d: Path) -> Hostile:
    ref = ref_pkl(d, fps=1e-6)
    return Hostile(["convert", str(ref), str(d / "out.csv")], ref)


def _npz_header(d: Path) -> Hostile:
    npz = npz_with_huge_header(d)
    return Hostile(["retarget", str(npz), "-o", str(d / "out.pkl")], npz)


def _pickle_case(
    command: list[str], payload: Callable[[], bytes], with_output: str | None = None
) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        pkl = pickle_file(d, "hostile.pkl", payload())
        args = [*command, str(pkl)] + ([] if with_output is None else ["-o", str(d / with_output)])
        return Hostile(args, pkl)

    return build


def _convert_pickle(payload: Callable[[], bytes]) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        pkl = pickle_file(d, "hostile.pkl", payload())
        return Hostile(["convert", str(pkl), str(d / "out.csv")], pkl)

    return build


def _log_case(frames: int = LOG_FRAMES, **overrides: object) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        log = robot_log(d, frames=frames, **overrides)
        return Hostile(["collect", "--from-log", str(log), "-o", str(d / "out.pkl")], log)

    return build


def _log_bytes(mangle: Callable[[bytes], bytes]) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        log = robot_log(d)
        log.write_bytes(mangle(log.read_bytes()))
        return Hostile(["collect", "--from-log", str(log), "-o", str(d / "out.pkl")], log)

    return build


def _flip_middle(raw: bytes) -> bytes:
    mid = len(raw) // 2
    return raw[:mid] + bytes(b ^ 0xFF for b in raw[mid : mid + 256]) + raw[mid + 256 :]


def _retarget_npz(make: Callable[[Path], Path]) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        src = make(d)
        return Hostile(["retarget", str(src), "-o", str(d / "out.pkl")], src)

    return build


def _npy_renamed(d: Path) -> Path:
    path = d / "array.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.zeros((10, 72)))
    return path


def _inspect_lib(**overrides: object) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        ref = ref_pkl(d, **overrides)
        return Hostile(["inspect", str(ref)], ref)

    return build


def _tuple_keys(d: Path) -> Hostile:
    from retarget.safe_pickle import safe_load

    (clip,) = safe_load(asap_reference(CLIP)).values()
    pkl = pickle_file(d, "tuple_keys.pkl", pickle.dumps({("a", 1): clip}, protocol=4))
    return Hostile(["inspect", str(pkl)], pkl)


def _convert_file(
    make: Callable[[Path], Path], output: str = "out.pkl", extra: tuple[str, ...] = ()
) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        src = make(d)
        return Hostile(["convert", str(src), str(d / output), *extra], src)

    return build


def _beyondmimic_strings(d: Path) -> Path:
    with np.load(BEYONDMIMIC) as npz:
        data = {k: npz[k] for k in npz.files}
    data["joint_pos"] = data["joint_pos"].astype(str)
    path = d / "bm.npz"
    with open(path, "wb") as fh:
        np.savez(fh, **data)
    return path


def _joints_file(joints: np.ndarray) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        from retarget.smpl_sequence import SMPL_JOINT_NAMES

        path = d / "joints.npz"
        with open(path, "wb") as fh:
            np.savez(fh, joints_w=joints, joint_names=np.array(SMPL_JOINT_NAMES), fps=np.float64(30.0))
        return path

    return make


def _csv_text(text: str | bytes) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        path = d / "motion.csv"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return path

    return make


def _csv_header_fps0(d: Path) -> Path:
    from retarget.formats import unitree_csv

    path = d / "motion.csv"
    meta = {"fps": 0, "quat_order": "wxyz"}
    rows = CSV.read_text().splitlines()[:40]
    path.write_text(
        f"{unitree_csv.HEADER_PREFIX}{json.dumps(meta)}\n" + "\n".join(r for r in rows if not r.startswith("#")) + "\n"
    )
    return path


def _run_command(command: str, config: str, checkpoint: Callable[[], bytes]) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        run = policy_run(d, config, checkpoint())
        ref = ref_pkl(d)
        args = {
            "eval-policy": ["eval-policy", str(run), "--motion", str(ref)],
            "export-policy": ["export-policy", str(run), "-o", str(d / "policy.onnx")],
            "play": ["play", "--policy", str(run), "--motion", str(ref), "-o", str(d / "play.mp4")],
            "collect": ["collect", "--policy", str(run), "--motion", str(ref), "-o", str(d / "out.pkl")],
        }[command]
        return Hostile(args, run)

    return build


def _symlink_loop(command: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        run = d / "run"
        run.symlink_to(run)
        ref = ref_pkl(d)
        args = {
            "eval-policy": ["eval-policy", str(run), "--motion", str(ref)],
            "export-policy": ["export-policy", str(run), "-o", str(d / "policy.onnx")],
        }[command]
        return Hostile(args, run)

    return build


def _sim2sim_sidecar(sidecar: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        onnx = d / "policy.onnx"
        onnx.write_bytes(b"not an onnx model")
        (d / "policy.onnx.json").write_text(sidecar)
        ref = ref_pkl(d)
        return Hostile(["sim2sim", "--onnx", str(onnx), "--motion", str(ref)], d / "policy.onnx.json")

    return build


def _render_width(d: Path) -> Hostile:
    ref = ref_pkl(d)
    return Hostile(["render", str(ref), "-o", str(d / "out.png"), "--width", "100000"], ref)


def _summary_manifest(text: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        out = d / "batch_out"
        out.mkdir()
        (out / "manifest.json").write_text(text)
        return Hostile(["summary", str(out)], out / "manifest.json")

    return build


def _delta_fit(payload: Callable[[], bytes]) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        pkl = pickle_file(d, "collection.pkl", payload())
        return Hostile(["delta", "fit", str(pkl), "-o", str(d / "delta.pt")], pkl)

    return build


_SINGULAR = np.zeros((20, 24, 3))
_SIDECAR_WITHOUT_SIM_KEYS = {
    "joint_names": [],
    "kp": [],
    "kd": [],
    "effort_limit_nm": [],
    "default_joint_pos_rad": [],
    "obs_history_len": 1,
    "sim": {},
    "obs": {},
}
_DOF_STRINGS = np.full((2, 23), "x")

CASES: tuple[FuzzCase, ...] = (
    # the output is the input, or not a regular file
    FuzzCase("retarget_output_is_input", _same_file),
    FuzzCase("convert_output_is_input", _convert_same),
    FuzzCase("convert_output_symlink_to_input", _convert_symlink_to_input),
    FuzzCase("convert_output_hardlink_of_input", _convert_hardlink_of_input),
    FuzzCase("convert_output_fifo", _output_special("fifo")),
    FuzzCase("convert_output_device", _output_special("device")),
    FuzzCase("convert_output_symlink", _output_special("symlink")),
    FuzzCase("convert_output_directory", _output_special("directory")),
    # sizes: refused before allocating
    FuzzCase("retarget_fps_1e6", _retarget_fps, memory=True),
    FuzzCase("retarget_source_0.001hz", _retarget_slow_source, memory=True),
    FuzzCase("convert_bvh_frame_time_1e6", _bvh_frame_time, memory=True),
    FuzzCase("convert_asap_fps_1e-6", _asap_tiny_fps, memory=True),
    FuzzCase("retarget_npz_header_1e12_frames", _npz_header, memory=True),
    FuzzCase("retarget_npz_header_1e6_frames", _retarget_npz(lambda d: npz_with_huge_header(d, 10**6)), memory=True),
    FuzzCase("inspect_shared_nested_lists", _pickle_case(["inspect"], shared_nested_lists), memory=True),
    FuzzCase("convert_shared_nested_lists", _convert_pickle(shared_nested_lists), memory=True),
    FuzzCase("delta_fit_shared_nested_lists", _delta_fit(shared_nested_lists), memory=True),
    FuzzCase("inspect_numpy_1e13_elements", _pickle_case(["inspect"], numpy_asks_1e13), memory=True),
    FuzzCase("inspect_deep_nesting", _pickle_case(["inspect"], deep_nesting), memory=True),
    # collect --from-log: the same validation as every reader of the collection
    FuzzCase("collect_log_fps_0", _log_case(fps=np.float64(0.0))),
    FuzzCase("collect_log_fps_negative", _log_case(fps=np.float64(-50.0))),
    FuzzCase("collect_log_fps_text", _log_case(fps=np.array("fast"))),
    FuzzCase("collect_log_time_nan", _log_case(time_s=np.full(LOG_FRAMES, np.nan))),
    FuzzCase("collect_log_single_step", _log_case(frames=1)),
    FuzzCase("collect_log_zero_quaternion", _log_case(root_quat_w=np.zeros((LOG_FRAMES, 4)))),
    FuzzCase("collect_log_truncated", _log_bytes(lambda raw: raw[: len(raw) // 2])),
    FuzzCase("collect_log_corrupt", _log_bytes(_flip_middle)),
    FuzzCase("collect_log_strings", _log_case(dof_pos=np.full((LOG_FRAMES, 23), "x"))),
    # every reader: one line, never a traceback
    FuzzCase("retarget_corrupt_compressed_npz", _retarget_npz(corrupt_compressed_npz)),
    FuzzCase("retarget_npy_renamed_npz", _retarget_npz(_npy_renamed)),
    FuzzCase("retarget_string_poses", _retarget_npz(lambda d: clip_npz(d, poses=np.full((10, 72), "a")))),
    FuzzCase("retarget_string_fps", _retarget_npz(lambda d: clip_npz(d, mocap_framerate=np.array("fast")))),
    FuzzCase("inspect_string_dof", _inspect_lib(dof=_DOF_STRINGS)),
    FuzzCase("inspect_ragged_dof", _inspect_lib(dof=[[0.0] * 23, [0.0] * 5])),
    FuzzCase("inspect_fps_text", _inspect_lib(fps="fast")),
    FuzzCase("inspect_tuple_keys", _tuple_keys),
    FuzzCase("convert_string_dof", _convert_file(lambda d: ref_pkl(d, dof=_DOF_STRINGS), "out.csv")),
    FuzzCase("convert_beyondmimic_strings", _convert_file(_beyondmimic_strings)),
    FuzzCase("convert_joints_strings", _convert_file(_joints_file(np.full((20, 24, 3), "x")), "out.npz")),
    FuzzCase("convert_joints_singular", _convert_file(_joints_file(_SINGULAR), "out.npz")),
    FuzzCase(
        "convert_bvh_bad_channel",
        _convert_file(
            lambda d: short_bvh(d, channels="CHANNELS 3 Qrotation Yrotation Xrotation"),
            "out.npz",
            ("--bvh-unit", "cmu"),
        ),
    ),
    FuzzCase(
        "convert_bvh_channel_count",
        _convert_file(
            lambda d: short_bvh(d, channels="CHANNELS 99 Zrotation Yrotation Xrotation"),
            "out.npz",
            ("--bvh-unit", "cmu"),
        ),
    ),
    FuzzCase("convert_csv_binary", _convert_file(_csv_text(bytes(range(256)) * 8), extra=("--quat-order", "xyzw"))),
    FuzzCase("convert_csv_odd_header", _convert_file(_csv_text("# asap-retarget {not json\n1,2,3\n"))),
    FuzzCase("convert_csv_header_list", _convert_file(_csv_text("# asap-retarget [30]\n1,2,3\n"))),
    FuzzCase("convert_csv_header_fps_0", _convert_file(_csv_header_fps0)),
    FuzzCase("eval_policy_config_list", _run_command("eval-policy", "[]", lambda: torch_bytes({"model": 1}))),
    FuzzCase("export_policy_checkpoint_list", _run_command("export-policy", "{}", lambda: torch_bytes([1, 2]))),
    FuzzCase("play_checkpoint_garbage", _run_command("play", "{}", lambda: b"garbage")),
    FuzzCase("collect_policy_wrong_payload", _run_command("collect", '{"env": 1}', lambda: torch_bytes({"a": 1}))),
    FuzzCase("eval_policy_symlink_loop", _symlink_loop("eval-policy")),
    FuzzCase("export_policy_symlink_loop", _symlink_loop("export-policy")),
    FuzzCase("sim2sim_sidecar_missing_keys", _sim2sim_sidecar(json.dumps(_SIDECAR_WITHOUT_SIM_KEYS))),
    FuzzCase("sim2sim_sidecar_not_json", _sim2sim_sidecar("{")),
    FuzzCase("render_width_100000", _render_width),
    FuzzCase("summary_manifest_list", _summary_manifest("[]")),
    FuzzCase("summary_manifest_not_json", _summary_manifest("{")),
    FuzzCase("delta_fit_not_a_dict", _delta_fit(lambda: pickle.dumps([1, 2, 3]))),
)


def _command_on(
    prefix: list[str], make: Callable[[Path], Path], suffix: Callable[[Path], list[str]] = lambda d: []
) -> Callable[[Path], Hostile]:
    """`PREFIX FILE SUFFIX` where FILE is the hostile file `make` writes."""

    def build(d: Path) -> Hostile:
        src = make(d)
        return Hostile([*prefix, str(src), *suffix(d)], src)

    return build


def _gmr_strings(d: Path) -> Path:
    from retarget.safe_pickle import safe_load

    data = safe_load(FIXTURES / "formats" / "gmr_pkl" / "airkick_stand.pkl")
    data["dof_pos"] = np.asarray(data["dof_pos"]).astype(str)
    return pickle_file(d, "gmr.pkl", pickle.dumps(data, protocol=4))


def _existing_file(name: str) -> Callable[[Path], list[str]]:
    def make(d: Path) -> list[str]:
        (d / name).write_text("not a folder\n")
        return ["-o", str(d / name)]

    return make


def _full_sidecar(**changes: object) -> str:
    """A sidecar with every key the deployment loop reads, then `changes` (``sim_<key>`` edits ``sim``)."""
    from robots.registry import load_robot_spec

    names = list(load_robot_spec("g1_23dof").joint_names)
    zeros = [0.0] * len(names)
    sim = {
        "robot": "g1_23dof",
        "physics_dt_s": 0.005,
        "decimation": 4,
        "init_height_offset_m": 0.0,
        "action_offset": "default",
        "action_scale": 0.25,
        "action_clip": 10.0,
    }
    info = {
        "joint_names": names,
        "kp": zeros,
        "kd": zeros,
        "effort_limit_nm": zeros,
        "default_joint_pos_rad": zeros,
        "obs_history_len": 1,
        "sim": sim,
        "obs": {"ang_vel_scale": 1.0, "dof_vel_scale": 1.0, "clip": 100.0},
    }
    for key, value in changes.items():
        if key.startswith("sim_"):
            sim[key[4:]] = value
        else:
            info[key] = value
    return json.dumps(info)


def _report_summary(text: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        (d / "out").mkdir()
        (d / "out" / "summary.json").write_text(text)
        return Hostile(["report", str(d / "out")], d / "out" / "summary.json")

    return build


EXTRA_CASES: tuple[FuzzCase, ...] = (
    FuzzCase(
        "eval_source_corrupt", _command_on(["eval", str(asap_reference(CLIP)), "--source"], corrupt_compressed_npz)
    ),
    FuzzCase(
        "eval_library_tuple_keys",
        lambda d: Hostile(["eval", str(_tuple_keys(d).names), "--source", str(smpl_clip(CLIP))], d / "tuple_keys.pkl"),
    ),
    FuzzCase("filter_npy_renamed", _command_on(["filter"], _npy_renamed)),
    FuzzCase("filter_string_poses", _command_on(["filter"], lambda d: clip_npz(d, poses=np.full((10, 72), "a")))),
    FuzzCase("convert_gmr_strings", _convert_file(_gmr_strings, "out.csv")),
    FuzzCase(
        "delta_fit_linear_log_truncated",
        _command_on(["delta", "fit-linear"], lambda d: _log_bytes(lambda r: r[:999])(d).names),
    ),
    FuzzCase(
        "delta_eval_not_a_dict",
        _command_on(["delta", "eval"], lambda d: pickle_file(d, "heldout.pkl", pickle.dumps([1]))),
    ),
    FuzzCase(
        "delta_sysid_motion_library", _command_on(["delta", "sysid"], ref_pkl, lambda d: ["-o", str(d / "p.json")])
    ),
    FuzzCase(
        "delta_fit_dynamics_deep",
        _command_on(
            ["delta", "fit-dynamics"],
            lambda d: pickle_file(d, "deep.pkl", deep_nesting(1000)),
            lambda d: ["-o", str(d / "dyn.pt")],
        ),
    ),
    FuzzCase(
        "train_track_motion_strings",
        lambda d: Hostile(
            ["train", "track", "--motion", str(ref_pkl(d, dof=_DOF_STRINGS)), "-o", str(d / "run")], d / "ref.pkl"
        ),
    ),
    FuzzCase(
        "train_track_output_is_a_file",
        lambda d: Hostile(["train", "track", "--motion", str(ref_pkl(d)), *_existing_file("run")(d)], d / "run"),
    ),
    FuzzCase("report_garbage_summary", _report_summary("[")),
    FuzzCase("sim2sim_sidecar_unknown_joint", _sim2sim_sidecar(_full_sidecar(joint_names=["hip"] * 23))),
    FuzzCase("sim2sim_sidecar_dt_0", _sim2sim_sidecar(_full_sidecar(sim_physics_dt_s=0))),
    FuzzCase("sim2sim_sidecar_unknown_robot", _sim2sim_sidecar(_full_sidecar(sim_robot="h1"))),
)
CASES = CASES + EXTRA_CASES


# ---------------------------------------------------------------- wrong data, wrong blame, misleading messages


def beyondmimic_npz(d: Path, name: str = "bm.npz", **overrides: np.ndarray) -> Path:
    """The ASAP reference of CLIP as our writer writes it for BeyondMimic, then `overrides` (callables get the
    written array and return the corrupted one)."""
    import warnings

    from retarget.formats import read_motions, write_motion
    from retarget.formats.registry import FormatNote

    (loaded,) = read_motions(asap_reference(CLIP))
    clean = d / "clean.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatNote)  # 23 → 29 dof: the wrists are written as zero
        write_motion(clean, loaded.motion, loaded.robot, "beyondmimic")
    with np.load(clean) as npz:
        data = {k: npz[k] for k in npz.files}
    clean.unlink()
    for key, change in overrides.items():
        data[key] = change(data[key]) if callable(change) else change
    path = d / name
    with open(path, "wb") as fh:
        np.savez(fh, **data)
    return path


def _zero_quaternions(quat_w: np.ndarray) -> np.ndarray:
    quat_w = quat_w.copy()
    quat_w[40:45, 7] = 0.0  # five frames of one body (the root's are refused as the motion's root already)
    return quat_w


def _knee_raised(pos_w: np.ndarray) -> np.ndarray:
    from retarget.formats.orders import ISAACLAB_G1_BODIES

    pos_w = pos_w.copy()
    pos_w[:, ISAACLAB_G1_BODIES.index("left_knee_link"), 2] += 0.05  # 5 cm: above the 3 cm tolerance
    return pos_w


def _beyondmimic_case(field: str, **overrides: object) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        src = beyondmimic_npz(d, **overrides)  # type: ignore[arg-type]
        return Hostile(["convert", str(src), "-o", str(d / "out.pkl"), "--from", "beyondmimic"], src, field)

    return build


def _bvh_duplicate_joint(d: Path) -> Hostile:
    bvh = short_bvh(d)
    bvh.write_text(bvh.read_text().replace("JOINT LeftLeg", "JOINT LeftUpLeg", 1))
    return Hostile(["convert", str(bvh), "-o", str(d / "out.npz"), "--bvh-unit", "cmu"], bvh, "'LeftUpLeg'")


def _default_run_config(drop_env_key: str | None = None) -> str:
    """The config.json `train track` writes, from the project's own default configs; minus one `env` key."""
    from trainers.config import TrackingEnvConfig, to_jsonable
    from trainers.ppo.config import PPOConfig

    config = {"env": to_jsonable(TrackingEnvConfig()), "ppo": to_jsonable(PPOConfig())}
    if drop_env_key is not None:
        del config["env"][drop_env_key]
    return json.dumps(config)


def _finetune_delta(delta: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        run = policy_run(d, _default_run_config(), torch_bytes({"model": {}}))
        args = ["train", "finetune", "--policy", str(run), "--delta", delta, "--motion", str(ref_pkl(d))]
        return Hostile([*args, "-o", str(d / "run2"), "--iterations", "1"], None, f"--delta {delta}: ")

    return build


def _finetune_config_without(key: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        run = policy_run(d, _default_run_config(drop_env_key=key), torch_bytes({"model": {}}))
        args = ["train", "finetune", "--policy", str(run), "--delta", "constant:0.1", "--motion", str(ref_pkl(d))]
        return Hostile([*args, "-o", str(d / "run2"), "--iterations", "1"], run / "config.json", f"key {key!r}")

    return build


def _csv_empty(text: str) -> Callable[[Path], Hostile]:
    def build(d: Path) -> Hostile:
        src = _csv_text(text)(d)
        args = ["convert", str(src), "-o", str(d / "out.pkl"), "--quat-order", "xyzw", "--in-fps", "30"]
        return Hostile(args, src, "empty file")

    return build


def _amass_trans_strings(d: Path) -> Hostile:
    with np.load(smpl_clip(CLIP)) as npz:
        trans = npz["trans"].astype(str)  # the same numbers, written as text
    src = clip_npz(d, trans=trans)
    return Hostile(["retarget", str(src), "-o", str(d / "out.pkl")], src, "'trans' must hold numbers, found strings")


LAST_CASES: tuple[FuzzCase, ...] = (
    FuzzCase("convert_beyondmimic_zero_quaternions", _beyondmimic_case("'body_quat_w'", body_quat_w=_zero_quaternions)),
    FuzzCase("convert_beyondmimic_bodies_off_kinematics", _beyondmimic_case("'body_pos_w'", body_pos_w=_knee_raised)),
    FuzzCase(
        "convert_beyondmimic_frame_counts",
        _beyondmimic_case("'body_lin_vel_w' has 118", body_lin_vel_w=lambda v: v[:-1]),  # one frame short
    ),
    FuzzCase("convert_bvh_duplicate_joint_name", _bvh_duplicate_joint),
    FuzzCase("train_finetune_delta_constant_inf", _finetune_delta("constant:inf")),
    FuzzCase("train_finetune_delta_constant_nan", _finetune_delta("constant:nan")),
    FuzzCase("train_finetune_delta_noise_1e308", _finetune_delta("noise:1e308")),
    FuzzCase("train_finetune_run_config_without_sim", _finetune_config_without("sim")),
    FuzzCase("convert_csv_empty", _csv_empty("")),
    FuzzCase("convert_csv_only_comments", _csv_empty("# a header and nothing else\n\n")),
    FuzzCase("retarget_amass_trans_strings", _amass_trans_strings),
)
CASES = CASES + LAST_CASES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    for case in CASES:
        folder = args.output / case.name
        folder.mkdir(parents=True, exist_ok=False)
        hostile = case.build(folder)
        print(f"{case.name}: asap-retarget {' '.join(hostile.args)}")


if __name__ == "__main__":
    main()
