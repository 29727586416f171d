"""Bundled trainers: ASAP stage 1 (phase-based motion tracking) in MuJoCo, on the CPU.

Nouns: :class:`~trainers.reference.MotionReference` (a clip, FK'd and interpolated by phase),
:class:`~trainers.env.TrackingEnv` (many G1s stepped together, rsl_rl-shaped),
:class:`~trainers.ppo.actor_critic.ActorCritic`. Verbs: :func:`~trainers.train.train_track`,
:func:`~trainers.evaluate.evaluate_policy`, :func:`~trainers.export.export_actor`.
"""
