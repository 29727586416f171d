"""Render where two tracker settings disagree: the kinematic retarget beside each setting's performed motion.

    nice -n 10 python bench/render_controller_disagreement.py --clip shoot_level1_filter \\
        --settings issue15,default --frames 85,95,105,140 -o docs/controller/shoot_level1.png

Each setting runs the controller verdict (`perform_result`) on the clip; its performed motion is taken over the
whole clip (not only the kept range) so the frames the other setting keeps can be seen. One row per frame, one
panel per motion (each camera follows its own robot, so the panels compare postures, not positions). Printed per
frame and setting: the root-anchored mean body distance (the quality bound's measure, 0.1 m) and whether the
verdict kept the frame. The PNG is palette-quantized to stay small.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_controller_speed import DATA, _parse_setting

from retarget.controller import ControllerConfig, perform_result
from retarget.controller.perform import performed_motion
from retarget.controller.track import tracker_model
from retarget.controller.verdict import frame_steps
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz
from retarget.viz.motion_view import MotionRenderer, Panel, RenderConfig
from robots.registry import load_robot_spec


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clip", required=True, help="name without 'video_'/'_amass'")
    parser.add_argument("--settings", default="issue15,default")
    parser.add_argument("--frames", required=True, help="comma-separated clip frames, one row each")
    parser.add_argument("--panel-px", type=int, default=240, help="width and height of one panel [px]")
    parser.add_argument("--colors", type=int, default=64, help="palette size of the PNG")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    settings = dict(_parse_setting(s) for s in args.settings.split(","))
    frames = [int(f) for f in args.frames.split(",")]
    seq = read_amass_npz(DATA / f"video_{args.clip}_amass.npz")
    result = retarget_sequence(seq)
    reference = result.motion
    robot = load_robot_spec("g1_23dof")
    panels = [Panel(reference, "g1_23dof", "retarget (reference)")]
    for name, tracker in settings.items():
        out = perform_result(result, seq, ControllerConfig(tracker=replace(tracker, num_threads=1)))
        run, verdict = out.run, out.verdict
        model = tracker_model("g1_23dof", tracker.physics_dt_s)
        motion = performed_motion(run, reference, robot, model, None)
        anchored_mm = run.anchored_distance_m[frame_steps(run, reference.num_frames, reference.fps)] * 1000.0
        kept = np.zeros(reference.num_frames, dtype=bool)
        for a, b in verdict.kept_ranges:
            kept[a:b] = True
        print(f"{name}: {verdict.decision} kept {verdict.kept_ranges} falls {len(run.falls)}")
        print("  " + "  ".join(f"f{f}: {anchored_mm[f]:.0f} mm {'kept' if kept[f] else 'TRIM'}" for f in frames))
        panels.append(Panel(motion, "g1_23dof", f"{name}: performed"))
    config = RenderConfig(width_px=args.panel_px * len(panels), height_px=args.panel_px)
    with MotionRenderer(panels, config) as renderer:
        rows = [renderer.render_frame(f) for f in frames]
    from PIL import Image

    image = Image.fromarray(np.concatenate(rows, axis=0)).quantize(colors=args.colors)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    image.save(args.output, format="PNG", optimize=True)
    print(f"wrote {args.output} ({args.output.stat().st_size / 1024:.0f} KB, {image.width}×{image.height})")


if __name__ == "__main__":
    main()
