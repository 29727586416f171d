"""Physics cleaning with a controller: a sampling-MPC tracker plays a robot motion in the trainers'
MuJoCo G1, decides which frames the robot can perform, and gives the motion it actually performed.

    run = track_motion(qpos, fps)                        # the simulated G1 tracking the motion
    check = controller_check(run, num_frames, fps, cfg)  # its frames: performed or not
    motion = performed_motion(run, reference, robot, model, (start, stop))

`asap-retarget filter --layers kinematic,controller` and `batch --stage controller` use it;
:func:`perform_clip` does it all for one source clip.
"""

from retarget.controller.config import ControllerConfig, TrackerConfig
from retarget.controller.perform import PERFORMED_SUFFIX, performed_motion, provenance, write_provenance
from retarget.controller.run_clip import PerformResult, perform_clip, perform_result
from retarget.controller.track import TrackingRun, track_motion, tracker_model
from retarget.controller.verdict import controller_check, tracking_errors_mm

__all__ = [
    "PERFORMED_SUFFIX",
    "ControllerConfig",
    "PerformResult",
    "TrackerConfig",
    "TrackingRun",
    "controller_check",
    "perform_clip",
    "perform_result",
    "performed_motion",
    "provenance",
    "track_motion",
    "tracker_model",
    "tracking_errors_mm",
    "write_provenance",
]
