"""A compact PPO split as rsl_rl does it: actor-critic, rollout storage (with GAE), algorithm, runner."""
