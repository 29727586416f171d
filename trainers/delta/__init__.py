"""ASAP stage 2, the delta action model: the analytic soft-joint Δa (:mod:`~trainers.delta.analytic`), the
bench-log linear fit (:mod:`~trainers.delta.linear_fit`), the collection format
(:mod:`~trainers.delta.collection`) and the learned Δa (:mod:`~trainers.delta.learned`)."""
