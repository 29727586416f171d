"""PPO pieces: GAE against a hand computation, learning a trivial task, checkpoint resume, export."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from trainers.ppo.actor_critic import ActorCritic
from trainers.ppo.config import PPOConfig
from trainers.ppo.runner import OnPolicyRunner
from trainers.ppo.storage import compute_gae


def test_gae_matches_a_hand_computation():
    # One env, three steps, an episode ending after step 1 (d=1), γ=0.9, λ=0.5.
    r = torch.tensor([[1.0], [2.0], [3.0]])
    v = torch.tensor([[0.5], [1.0], [1.5]])
    d = torch.tensor([[0.0], [1.0], [0.0]])
    last = torch.tensor([2.0])
    returns, adv = compute_gae(r, v, d, last, gamma=0.9, lam=0.5)
    # δ2 = 3 + 0.9·2 − 1.5 = 3.3;            A2 = 3.3
    # δ1 = 2 + 0 − 1.0 = 1.0 (terminal);      A1 = 1.0
    # δ0 = 1 + 0.9·1.0 − 0.5 = 1.4;           A0 = 1.4 + 0.9·0.5·1.0 = 1.85
    np.testing.assert_allclose(adv.squeeze(1).numpy(), [1.85, 1.0, 3.3], rtol=1e-6)
    np.testing.assert_allclose(returns.squeeze(1).numpy(), [2.35, 2.0, 4.8], rtol=1e-6)


def test_gae_with_lambda_one_is_the_discounted_return_minus_value():
    rng = np.random.default_rng(0)
    r = torch.as_tensor(rng.normal(size=(6, 2)), dtype=torch.float32)
    v = torch.as_tensor(rng.normal(size=(6, 2)), dtype=torch.float32)
    d = torch.zeros(6, 2)
    last = torch.as_tensor(rng.normal(size=2), dtype=torch.float32)
    returns, _ = compute_gae(r, v, d, last, gamma=0.95, lam=1.0)
    expected = last.clone()
    for t in reversed(range(6)):
        expected = r[t] + 0.95 * expected
    torch.testing.assert_close(returns[0], expected, rtol=1e-5, atol=1e-5)


class MatchTargetEnv:
    """One-step episodes: observe o ~ N(0, I₄), get −‖a − W o‖². The best policy is a = W o."""

    def __init__(self, num_envs: int = 64, seed: int = 0):
        self.num_envs, self.num_obs, self.num_privileged_obs, self.num_actions = num_envs, 4, 4, 2
        self.max_episode_length, self.device = 1, "cpu"
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long)
        self.gen = torch.Generator().manual_seed(seed)
        self.w = torch.tensor([[1.0, -0.5, 0.0, 0.3], [0.0, 0.8, -1.0, 0.0]])
        self.obs = torch.randn(num_envs, 4, generator=self.gen)

    def get_observations(self):
        return self.obs, {"observations": {"critic": self.obs}}

    def step(self, actions):
        reward = -((actions - self.obs @ self.w.T) ** 2).sum(-1)
        self.obs = torch.randn(self.num_envs, 4, generator=self.gen)
        done = torch.ones(self.num_envs, dtype=torch.bool)
        extras = {"time_outs": torch.zeros(self.num_envs, dtype=torch.bool), "observations": {"critic": self.obs}}
        return self.obs, reward, done, extras


def _small_cfg(**kw):
    base = {
        "actor_hidden": (32, 32),
        "critic_hidden": (32, 32),
        "num_steps_per_env": 8,
        "init_noise_std": 0.5,
        "learning_rate": 3e-3,
        "entropy_coef": 0.0,
    }
    base.update(kw)
    return PPOConfig(**base)


def test_ppo_learns_a_trivial_task_with_a_fixed_seed():
    torch.manual_seed(0)
    runner = OnPolicyRunner(MatchTargetEnv(), _small_cfg())
    rows = runner.learn(40)
    first, last = rows[0]["mean_step_reward"], np.mean([r["mean_step_reward"] for r in rows[-5:]])
    # Untrained: E‖W o‖² + noise ≈ −3.7; stated margin: the mean reward at least triples towards 0.
    assert first < -2.5
    assert last > first / 3.0
    assert rows[-1]["action_std"] < 0.5  # exploration shrinks as the mean becomes right


def test_checkpoint_resume_restores_weights_and_counters(tmp_path):
    torch.manual_seed(0)
    env = MatchTargetEnv()
    runner = OnPolicyRunner(env, _small_cfg(), run_dir=tmp_path)
    runner.learn(3)
    assert (tmp_path / "model_last.pt").exists() and (tmp_path / "learning_curve.csv").exists()
    other = OnPolicyRunner(env, _small_cfg())
    other.load(tmp_path / "model_last.pt")
    assert other.iteration == 3 and other.env_steps == 3 * 8 * 64
    obs = torch.randn(5, 4)
    torch.testing.assert_close(other.policy.act_inference(obs), runner.policy.act_inference(obs))
    rows = other.learn(1)
    assert rows[0]["iteration"] == 4


def test_a_curve_from_before_the_trust_region_columns_gets_them_when_the_run_goes_on(tmp_path):
    """Resuming a run whose learning_curve.csv lacks columns this version writes: the file is rewritten with the
    current header (earlier rows NaN there; a column only the old file had is kept, NaN after), then the row
    appended."""
    import csv

    from trainers.ppo.runner import CURVE_FIELDS

    torch.manual_seed(0)
    runner = OnPolicyRunner(MatchTargetEnv(), _small_cfg(), run_dir=tmp_path)
    runner.learn(1)
    curve = tmp_path / "learning_curve.csv"
    (row,) = csv.DictReader(curve.open())
    old = [f for f in CURVE_FIELDS if not f.startswith("anchor_")] + ["retired"]
    with curve.open("w", newline="") as f:  # as an older version wrote it
        writer = csv.DictWriter(f, fieldnames=old)
        writer.writeheader()
        writer.writerow({**{k: row[k] for k in old if k != "retired"}, "retired": "7"})
    runner.learn(1)
    rows = list(csv.DictReader(curve.open()))
    assert list(rows[0]) == [*CURVE_FIELDS, "retired"]
    assert [r["iteration"] for r in rows] == ["1", "2"] and rows[0]["mean_step_reward"] == row["mean_step_reward"]
    assert rows[0]["anchor_kl"] == rows[1]["anchor_kl"] == "nan"
    assert (rows[0]["retired"], rows[1]["retired"]) == ("7", "nan")
    assert len(curve.read_text().splitlines()) == 3


def test_normalizer_matches_batch_statistics():
    from trainers.ppo.actor_critic import RunningNorm

    norm = RunningNorm(3)
    data = torch.randn(1000, 3) * torch.tensor([1.0, 5.0, 0.1]) + torch.tensor([2.0, -1.0, 0.0])
    for chunk in data.split(137):
        norm.update(chunk)
    torch.testing.assert_close(norm.mean, data.mean(0), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(norm.var, data.var(0, unbiased=False), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("suffix", [".onnx", ".pt"])
@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_exported_actor_reproduces_the_policy(tmp_path, suffix):
    import json

    from trainers.config import TrackingEnvConfig, to_jsonable
    from trainers.export import export_actor
    from trainers.policy_io import load_policy

    torch.manual_seed(0)
    env = MatchTargetEnv()
    runner = OnPolicyRunner(env, _small_cfg(), run_dir=tmp_path)
    runner.learn(2)
    config = {"env": to_jsonable(TrackingEnvConfig()), "ppo": to_jsonable(_small_cfg())}
    (tmp_path / "config.json").write_text(json.dumps(config))
    loaded = load_policy(tmp_path)
    out = export_actor(loaded, tmp_path / f"policy{suffix}")
    obs = torch.randn(7, 4)
    expected = runner.policy.act_inference(obs).detach().numpy()
    if suffix == ".onnx":
        import onnx
        from onnx.reference import ReferenceEvaluator

        graph = onnx.load(out)
        assert [i.name for i in graph.graph.input] == ["obs"] and [o.name for o in graph.graph.output] == ["actions"]
        got = ReferenceEvaluator(graph).run(None, {"obs": obs.numpy()})[0]
    else:
        got = torch.jit.load(str(out))(obs).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    sidecar = json.loads((tmp_path / f"policy{suffix}.json").read_text())
    assert len(sidecar["joint_names"]) == 23 and sidecar["obs_history_len"] == 5


class _Killed(Exception):
    pass


def _kill_at(iteration: int):
    def on_iteration(row: dict) -> None:
        if row["iteration"] == iteration:
            raise _Killed

    return on_iteration


def _curve_iterations(run_dir) -> list[int]:
    import csv

    return [int(r["iteration"]) for r in csv.DictReader((run_dir / "learning_curve.csv").open())]


def test_a_run_killed_between_checkpoints_resumes_from_its_newest_and_recomputes_the_rows_after_it(tmp_path):
    from trainers.checkpoints import newest_checkpoint

    torch.manual_seed(0)
    env = MatchTargetEnv()
    runner = OnPolicyRunner(env, _small_cfg(), run_dir=tmp_path)
    with pytest.raises(_Killed):  # killed after iteration 3's rows are written, before the end of learn()
        runner.learn(10, on_iteration=_kill_at(3), checkpoint_every=2)
    assert _curve_iterations(tmp_path) == [1, 2, 3]
    newest = newest_checkpoint(tmp_path)
    assert newest == tmp_path / "model_last.pt"  # written with every checkpoint, not only at the end
    resumed = OnPolicyRunner(env, _small_cfg(), run_dir=tmp_path)
    resumed.resume(newest)
    assert resumed.iteration == 2 and _curve_iterations(tmp_path) == [1, 2]
    resumed.learn(2, checkpoint_every=2)
    assert _curve_iterations(tmp_path) == [1, 2, 3, 4]
    terms = [json.loads(line)["iteration"] for line in (tmp_path / "episode_terms.jsonl").read_text().splitlines()]
    assert terms == [1, 2, 3, 4]


def test_the_newest_checkpoint_is_chosen_by_iteration_not_by_name_or_file(tmp_path):
    import shutil

    from trainers.checkpoints import newest_checkpoint
    from trainers.policy_io import find_checkpoint

    torch.manual_seed(0)
    runner = OnPolicyRunner(MatchTargetEnv(), _small_cfg(), run_dir=tmp_path)
    runner.learn(10, checkpoint_every=9)
    # A folder whose model_last.pt lags its numbered checkpoints ("9" sorts after "10" as text).
    shutil.copy(tmp_path / "model_9.pt", tmp_path / "model_last.pt")
    shutil.copy(tmp_path / "model_9.pt", tmp_path / "model_10.pt")
    torch.save({**torch.load(tmp_path / "model_9.pt", weights_only=True), "iteration": 10}, tmp_path / "model_10.pt")
    assert newest_checkpoint(tmp_path) == tmp_path / "model_10.pt"
    assert find_checkpoint(tmp_path) == tmp_path / "model_10.pt"
    (tmp_path / "model_10.pt").unlink()
    assert newest_checkpoint(tmp_path) == tmp_path / "model_last.pt"  # a tie goes to model_last.pt


def test_deterministic_actions_do_not_depend_on_the_callers_torch_threads():
    """Six rows (the bench's fitting rollouts): on an AVX-512 MKL the last two rows of the raw actor's output differ
    by ~1e-7 between 1 and 2 threads, enough for a PyBullet rollout to drift; ``act_inference`` pins the count."""
    torch.manual_seed(0)
    policy = ActorCritic(380, 400, 23).eval()
    obs = torch.randn(6, 380)
    before = torch.get_num_threads()
    actions = []
    try:
        for threads in (2, 1, 4):
            torch.set_num_threads(threads)
            actions.append(policy.act_inference(obs))
            assert torch.get_num_threads() == threads  # the caller's count is given back
    finally:
        torch.set_num_threads(before)
    for other in actions[1:]:
        assert torch.equal(other, actions[0])
