"""`tomacs plan` against what the job then does on the loopback fake server (issue 27): a static job's
calls exactly and its tokens within 20 %, a learned job's calls within 5 % of the expected value
and under the bound, and a resumed job's cached replies counted exactly."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tomacs.config import compose
from tomacs.launch.plan import Count, PlanBackbone, fit_length, plan_job, sweep_jobs
from tomacs.launch.spec import job_spec
from tomacs.testing.fake_openai_server import FakeOpenAIServer
from tomacs.tokens import count_tokens

# about 120 completion tokens, as the plan's stand-in replies are without a cache to learn from
REPLY = (
    "Let me work through the question step by step. " * 5
    + "The options differ in one detail, and after weighing what the other agents said, "
    + "checking each claim against the facts I know, and discounting any answer given without "
    + "a reason, I keep the answer that is best supported. " * 2
    + "\nFinal answer: (A)"
)
LATENCY = 0.05


class VariedServer(FakeOpenAIServer):
    """Replies as long as REPLY, each naming its own request, so no two prompts of a run coincide
    (a constant reply makes some round-2 prompts identical)."""

    def _text(self, body: dict[str, Any]) -> str:
        tag = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()[:8]
        return f"Reply {tag}. {REPLY}"


def _base(srv: FakeOpenAIServer, cache: Path) -> list[str]:
    return [
        "backbone=openai_compatible",
        f"backbone.api_base={srv.base_url}",
        "backbone.model=openai/fake",
        f"backbone.cache.path={cache}",
        "backbone.max_concurrency=8",
        "backbone.price={input_per_mtok: 0.1, output_per_mtok: 0.4}",
    ]


# `tomacs plan` and the job run in this process (the `tomacs_here` fixture of tests/conftest.py): what is
# compared is the plan's numbers and the job's, not the console script
Cli = Callable[..., Any]


def _plan(cli: Cli, *overrides: str, evaluate: bool = False) -> dict[str, Any]:
    p = cli("plan", "--json", f"--latency={LATENCY}", *(["--evaluate"] if evaluate else []), *overrides)
    assert p.returncode == 0, p.stderr[-2000:]
    (job,) = json.loads(p.stdout)["jobs"]
    return job


def _run(cli: Cli, mode: str, out: Path, *overrides: str) -> tuple[dict[str, Any], float]:
    t0 = time.perf_counter()
    p = cli(mode, *overrides, f"hydra.run.dir={out}")
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads((out / "results.json").read_text()), time.perf_counter() - t0


@pytest.mark.slow  # a job against the loopback fake server
def test_static_job_calls_exact_tokens_within_20_percent_and_cache_hits_exact(
    tmp_path: Path, tomacs_here: Cli
) -> None:
    cache = tmp_path / "cache.sqlite"
    with VariedServer(include_usage=False, latency=LATENCY) as srv:
        job = [*_base(srv, cache), "method=complete", "agents=3", "rounds=2", "attack=gt50", "eval.size=6"]
        job += ["attack.onset_rounds=[2]"]
        job += ["eval.batch_size=3"]
        plan = _plan(tomacs_here, *job, evaluate=True)
        res, wall = _run(tomacs_here, "evaluate", tmp_path / "a", *job)
        st = res["backbone_stats"]
        # every request of the job, and which of them are paid: an agent's repeat of its own request
        # (an adversary's prompt is the same in every round) is served by the response cache
        assert st["requests"] == res["metrics"]["llm_calls"] == plan["calls_total"] == plan["calls_bound"]
        assert srv.requests == st["calls"] == plan["calls_total"] - plan["cached"] - plan["repeats"]
        assert plan["cached"] == 0  # nothing was in the response cache before the job
        assert plan["calls"]["decision"] == res["metrics"]["llm_calls"] - plan["calls"]["test"]
        planned = plan["paid_prompt_tokens"] + plan["paid_completion_tokens"]
        actual = st["prompt_tokens"] + st["completion_tokens"]  # the paid calls' usage
        assert abs(planned - actual) <= 0.2 * actual, (planned, actual)
        assert plan["usd"] == pytest.approx(st["cost_usd"], rel=0.2)
        print(
            f"\nstatic plan vs actual: calls {plan['calls_total']} vs {st['requests']} (paid "
            f"{plan['paid_calls']} vs {st['calls']}); paid tokens {planned} vs "
            f"{actual}; USD {plan['usd']:.6f} vs {st['cost_usd']:.6f}; wall {plan['wall_s']:.2f} s vs "
            f"evaluation {res['metrics']['eval_wall_s']:.2f} s (job {wall:.1f} s)"
        )
        # planned again after the run: every reply is in the cache, nothing is left to pay
        again = _plan(tomacs_here, *job, evaluate=True)
        assert again["cached"] == again["calls_total"] == st["requests"] and again["usd"] == 0.0
        assert again["repeats"] == 0  # every repeat's first reply is in the response cache now
        assert again["paid_prompt_tokens"] == 0 and again["wall_s"] == 0.0


@pytest.mark.slow  # a job against the loopback fake server
def test_learned_job_calls_within_5_percent_of_expected_and_under_the_bound(
    tmp_path: Path, tomacs_here: Cli
) -> None:
    cache = tmp_path / "cache.sqlite"
    with VariedServer(include_usage=False, latency=LATENCY) as srv:
        job = [*_base(srv, cache), "method=todycomm", "embedder=hashing", "attack=gt50", "agents=4"]
        job += [
            "rounds=3",
            "attack.onset_rounds=[3]",
            "train.size=8",
            "train.val_size=4",
            "train.batch_size=4",
            "train.epochs=2",
        ]
        job += ["train.patience=null", "eval.size=4"]
        plan = _plan(tomacs_here, *job)
        res, wall = _run(tomacs_here, "train", tmp_path / "a", *job)
        st = res["backbone_stats"]
        assert res["train"]["epochs_run"] == 2
        got = st["requests"]  # paid or served by the cache (repeats within the job)
        assert abs(plan["calls_total"] - got) <= 0.05 * got, (plan, st)
        assert got <= plan["calls_bound"]
        planned = plan["paid_prompt_tokens"] + plan["paid_completion_tokens"]
        actual = st["prompt_tokens"] + st["completion_tokens"]
        assert abs(planned - actual) <= 0.2 * actual, (planned, actual)
        print(
            f"\nlearned plan vs actual: calls {plan['calls_total']} (bound {plan['calls_bound']}) vs "
            f"{st['requests']} (paid {plan['paid_calls']} vs {st['calls']}); paid tokens "
            f"{planned} vs {actual}; USD {plan['usd']:.6f} vs {st['cost_usd']:.6f}; "
            f"wall {plan['wall_s']:.2f} s vs train+eval "
            f"{res['train']['train_wall_s'] + res['metrics']['eval_wall_s']:.2f} s (job {wall:.1f} s)"
        )


def test_one_epoch_dry_run_times_epochs_equals_the_dry_run_of_every_epoch() -> None:
    """Scaling one epoch is what the plan does: a static method's epochs repeat the same calls,
    whatever order and sample index the epoch draws (checked on the credibility warm-up's walk)."""
    from tomacs.execution.batches import walk
    from tomacs.job.components import build
    from tomacs.sim.backbone import SimBackbone

    cfg = compose(
        [
            "method=complete",
            "agents=3",
            "rounds=2",
            "attack=gt50",
            "attack.onset_rounds=[2]",
            "train.size=6",
            "eval.size=2",
        ]
    )
    comps = build(job_spec(cfg), need_train=True)
    comps.train_qs = comps.test_qs = comps.bench.load("train", 6, 0)
    pb = PlanBackbone(SimBackbone("mmlu", 0), None, None)
    comps.executor.backbone = pb
    per_epoch = []
    for epoch in range(3):
        pb.phase = f"e{epoch}"
        walk(
            comps.executor,
            comps.method,
            comps.train_qs[epoch:] + comps.train_qs[:epoch],
            4,
            train=True,
            phase=f"train{epoch}",
            sample_index=epoch,
        )
        per_epoch.append(pb.count(f"e{epoch}", "agent").calls + pb.count(f"e{epoch}", "decision").calls)
    assert per_epoch == [per_epoch[0]] * 3 and per_epoch[0] >= 6 * 3 * 2


def test_identical_prompts_of_two_agents_are_two_paid_calls_one_agents_repeat_is_cached(
    tmp_path: Path,
) -> None:
    """The plan counts with the response cache's own key: per agent slot (docs/deviations.md)."""
    from tomacs.backbones.base import GenerationReply
    from tomacs.backbones.llm import LiteLLMBackbone
    from tomacs.testing.requests import plain_request

    class Stub:
        name = "stub"

        async def generate(self, requests: list[Any]) -> list[GenerationReply]:
            return [GenerationReply("Answer: (A)", 1, 1) for _ in requests]

    real = LiteLLMBackbone(model="openai/fake", api_base="http://127.0.0.1:9/v1", cache=tmp_path / "c.sqlite")
    pb = PlanBackbone(Stub(), real, None)
    reqs = [plain_request("the adversary's prompt") for _ in range(4)]
    for agent, r in zip([0, 1, 2, 1], reqs, strict=True):
        r.agent = agent
    asyncio.run(pb.generate(reqs[:3]))
    asyncio.run(pb.generate(reqs[3:]))  # agent 1 asks again, as an adversary does in its next round
    c = pb.count("test", "agent")
    # the cache is empty: agent 1's repeat is a repeat within the job, not a reply in the response cache
    assert (c.calls, c.cached, c.repeats, c.paid) == (4, 0, 1, 3) and c.waves == [3, 0]
    # with agent 0's reply in the response cache: agent 0 is a cache hit, agent 1's repeat still a repeat
    real.cache.put(real.cache_key(reqs[0]), {"model": "openai/fake", "text": "Answer: (B)"})
    pb = PlanBackbone(Stub(), real, None)
    asyncio.run(pb.generate(reqs[:3]))
    asyncio.run(pb.generate(reqs[3:]))
    c = pb.count("test", "agent")
    assert (c.calls, c.cached, c.repeats, c.paid) == (4, 1, 1, 2) and c.waves == [2, 0]
    asyncio.run(real.aclose())


def test_count_scaling_and_wall_by_waves() -> None:
    c = Count(calls=10, prompt=1000, completion=200, paid_prompt=1000, paid_completion=200, waves=[10, 3])
    assert c.wall_s(2.0, 4) == (3 + 1) * 2.0  # ceil(10/4) + ceil(3/4) waves of 2 s
    assert c.scaled(3).calls == 30 and c.scaled(3).wall_s(2.0, 4) == 3 * 8.0
    assert (c + c).paid_prompt == 2000


def test_fit_length_keeps_the_answer_line() -> None:
    text = "short reasoning here\nAnswer: (B)"
    out = fit_length(text, 60)
    assert out.endswith("\nAnswer: (B)") and 50 <= count_tokens(out) <= 70
    assert fit_length(text, None) == text


def test_sweep_expansion_is_hydras_and_tables_are_the_tables_jobs() -> None:
    assert sweep_jobs(["method=complete,chain", "seed=0,1"], True) == [
        ["method=complete", "seed=0"],
        ["method=complete", "seed=1"],
        ["method=chain", "seed=0"],
        ["method=chain", "seed=1"],
    ]
    assert sweep_jobs(["method=complete"], False) == [["method=complete"]]
    jobs = sweep_jobs(["table=table2", "seed=0", "benchmark=mmlu"], False)
    assert len(jobs) == 5 * 3 and all(j[0] == "+table=table2" for j in jobs)


def test_plan_of_a_sim_job_costs_nothing_and_both_budgets_are_shown() -> None:
    cfg = compose(["method=todycomm", "embedder=hashing", "attack=gt50", "eval.size=4", "train=default"])
    from tomacs.launch.plan import other_budgets

    p = plan_job(cfg, "train", sample=4)
    other_budgets(p, job_spec(cfg), 1.0)
    assert p.dollars(p.total()) == 0.0 and p.epochs == 24 and p.epochs_min == 11
    assert set(p.other_budgets) == {"default", "paper"}
    assert p.other_budgets["paper"]["epochs"] == 3
    # 256 training questions scaled from 4: calls per epoch x epochs
    assert p.other_budgets["default"]["calls"] > 7 * p.other_budgets["paper"]["calls"]
    # TodyComm's own budget is the paper's (conf/method/todycomm.yaml): what its plain plan prices
    own = plan_job(
        compose(["method=todycomm", "embedder=hashing", "attack=gt50", "eval.size=4"]), "train", sample=4
    )
    assert (own.budget, own.epochs) == ("paper", 3)


def test_plan_command_prints_both_budgets_and_refuses_bad_flags(tomacs_here: Cli) -> None:
    p = tomacs_here(
        "plan",
        "method=todycomm",
        "embedder=hashing",
        "attack=gt50",
        "eval.size=4",
        "train=default",
        "--sample",
        "32",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out = " ".join(p.stdout.split())
    assert "at train=default:" in out and "at train=paper:" in out and "[train=default: 24 epochs" in out
    assert "simulator: no latency per call" in out and "latency 1 s assumed" not in out
    p = tomacs_here("plan", "method=complete", "--latency", "-1")
    assert p.returncode == 2 and "--latency must be >= 0" in p.stderr
    p = tomacs_here("plan", "mode=evaluate")
    assert p.returncode == 2 and "--evaluate" in p.stderr
