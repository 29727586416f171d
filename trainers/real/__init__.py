"""The "real" G1 without a robot: named profiles (:mod:`~trainers.real.profiles`) applied to a copy of the
nominal simulator (:mod:`~trainers.real.model`), a PD stepper (:mod:`~trainers.real.stepper`) and the
fixed-base bench log (:mod:`~trainers.real.bench`)."""
