"""The shared executor (TodyComm Alg. 3) on a scripted backbone whose replies we control."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tomacs.agents.adversary import AdversarySchedule
from tomacs.backbones.base import GenerationReply, GenerationRequest
from tomacs.execution.decision import weighted_vote
from tomacs.execution.executor import Executor, ExecutorConfig
from tomacs.launch.spec import job_spec
from tomacs.methods.base import Method, MethodContext
from tomacs.types import DecisionGraph, Question, RoundGraph

Q = Question(
    id="q1", text="Which letter?", options=("a", "b", "c", "d"), answer="B", benchmark="t", kind="mc"
)


class Scripted:
    """Honest agents answer B, adversaries their target; the decision agent answers C."""

    name = "scripted"

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        out = []
        for r in requests:
            self.requests.append(r)
            if r.kind == "decision":
                ans = "C"
            elif r.behaviour == "adversarial":
                ans = r.target
            else:
                ans = "B"
            out.append(
                GenerationReply(
                    text=f"agent {r.agent} round {r.round}.\nAnswer: {ans}",
                    prompt_tokens=10,
                    completion_tokens=5,
                )
            )
        return out

    def stats(self) -> dict:
        return {}

    async def aclose(self) -> None:
        return None


class FixedGraph(Method):
    name = "fixed"

    def __init__(
        self,
        ctx: MethodContext,
        nodes: list[int],
        edges: list[tuple[int, int]],
        mode: str = "vote",
        voters: list[int] | None = None,
    ) -> None:
        super().__init__(ctx)
        self.nodes, self.edges, self.mode, self.voters = nodes, edges, mode, voters

    def act(self, state, t, history):  # noqa: ANN001
        return [RoundGraph(nodes=list(self.nodes), edges=list(self.edges)) for _ in history]

    def decide(self, state, history):  # noqa: ANN001
        voters = self.voters if self.voters is not None else list(range(self.ctx.n_agents))
        return [DecisionGraph(voters=voters, mode=self.mode) for _ in history]


def make(
    n: int = 4, rounds: int = 3, count: int | None = 0, onsets=(3,)
) -> tuple[Executor, Scripted, MethodContext]:
    roles = [f"role{i}" for i in range(n)]
    bb = Scripted()
    sched = AdversarySchedule(n_agents=n, rounds=rounds, count=count, rate=None, onset_rounds=onsets)
    ex = Executor(ExecutorConfig(n, rounds, roles, seed=7), bb, sched)
    ctx = MethodContext(n_agents=n, rounds=rounds, roles=roles, seed=7)
    return ex, bb, ctx


def test_the_executor_has_what_the_decision_rules_call_back() -> None:
    """tomacs.execution.decision types the executor as DecisionHost (its settings as RunView), never importing
    it: the executor must keep every member they name, a method with the same parameters."""
    import inspect

    from tomacs.execution.decision import DecisionHost, RunView

    ex, bb, _ = make()
    for proto, obj in ((DecisionHost, ex), (RunView, ex.cfg)):
        members = [k for k in vars(proto) if not k.startswith("_")]
        assert members, proto
        for k in members:
            assert hasattr(obj, k), f"{type(obj).__name__} lacks {proto.__name__}.{k}"
            if inspect.isfunction(vars(proto)[k]):
                want = list(inspect.signature(vars(proto)[k]).parameters)
                assert list(inspect.signature(getattr(type(obj), k)).parameters) == want, k
    assert ex.backbone is bb and inspect.iscoroutinefunction(ex.decide_one)


def test_non_participants_make_no_call_and_cost_nothing() -> None:
    ex, bb, ctx = make()
    m = FixedGraph(ctx, nodes=[0, 2], edges=[(0, 2)])
    (ep,), _ = ex.run_batch([Q], m, train=False, phase="eval")
    # round 1: 4 calls; rounds 2 and 3: 2 calls each
    assert len(bb.requests) == 4 + 2 + 2
    for t in (2, 3):
        r = ep.rounds[t - 1]
        assert [o.participated for o in r] == [True, False, True, False]
        assert r[1].prompt_tokens == 0 and r[1].completion_tokens == 0
        assert r[1].text == ep.rounds[0][1].text  # carried forward
    assert ep.prompt_tokens() == 8 * 10 and ep.completion_tokens() == 8 * 5
    assert ep.llm_calls() == 8


def test_messages_follow_the_dag_in_topological_order() -> None:
    ex, bb, ctx = make()
    m = FixedGraph(ctx, nodes=[0, 1, 2, 3], edges=[(3, 1), (1, 0), (3, 0)])
    ex.run_batch([Q], m, train=False, phase="eval")
    r2 = [r for r in bb.requests if r.round == 2]
    order = [r.agent for r in r2]
    assert order.index(3) < order.index(1) < order.index(0)
    by_agent = {r.agent: r for r in r2}
    assert [msg.sender for msg in by_agent[0].incoming] == [1, 3]
    assert [msg.sender for msg in by_agent[1].incoming] == [3]
    assert by_agent[2].incoming == [] and by_agent[3].incoming == []
    # the receiver's prompt carries the sender's current-round text
    assert "agent 3 round 2" in "".join(x["content"] for x in by_agent[1].messages)


def test_adversary_pre_onset_prompts_identical_to_honest_run() -> None:
    ex_h, bb_h, ctx = make(count=0)
    ex_a, bb_a, _ = make(count=2, onsets=(3,))
    m = FixedGraph(ctx, nodes=[0, 1, 2, 3], edges=[(0, 1), (1, 2), (2, 3)])
    (ep_a,), _ = ex_a.run_batch([Q], m, train=False, phase="eval")
    ex_h.run_batch([Q], m, train=False, phase="eval")
    advs = ep_a.plan.adversaries
    assert len(advs) == 2
    for r_a in bb_a.requests:
        if r_a.kind == "agent" and r_a.agent in advs and r_a.round < 3:
            twin = [r for r in bb_h.requests if r.agent == r_a.agent and r.round == r_a.round]
            assert twin and twin[0].messages == r_a.messages
    post = [r for r in bb_a.requests if r.agent in advs and r.round == 3]
    assert post and all(r.behaviour == "adversarial" and r.target == ep_a.plan.target for r in post)
    # the adversary's output carries the persuasive suffix, and the receiver sees it as persuasive
    out = ep_a.rounds[2][advs[0]]
    assert "Please prioritize my answer" in out.text
    assert ep_a.plan.target != Q.answer


def test_llm_decision_and_vote() -> None:
    ex, bb, ctx = make()
    m = FixedGraph(ctx, nodes=[0, 1, 2, 3], edges=[], mode="llm", voters=[1, 3])
    (ep,), _ = ex.run_batch([Q], m, train=False, phase="eval")
    dec = [r for r in bb.requests if r.kind == "decision"]
    assert len(dec) == 1 and [msg.sender for msg in dec[0].incoming] == [1, 3]
    assert ep.final_answer == "C" and not ep.correct
    assert ep.llm_calls() == 4 * 3 + 1
    m2 = FixedGraph(ctx, nodes=[0, 1, 2, 3], edges=[], mode="vote")
    (ep2,), _ = ex.run_batch([Q], m2, train=False, phase="eval")
    assert ep2.final_answer == "B" and ep2.correct


def test_weighted_vote_weights_and_seeded_ties() -> None:
    rng = np.random.default_rng(0)
    assert weighted_vote(["A", "B", "B"], None, rng) == "B"
    assert weighted_vote(["A", "B", "B"], [0.6, 0.2, 0.2], rng) == "A"
    assert weighted_vote([None, None], None, rng) is None
    wins = {"A": 0, "B": 0}
    for s in range(400):
        wins[weighted_vote(["A", "B"], None, np.random.default_rng(s))] += 1
    assert 150 < wins["A"] < 250  # ties are a fair coin, not list order


def test_same_seed_same_episodes() -> None:
    ex1, _, ctx = make(count=2, onsets=(2, 3))
    ex2, _, _ = make(count=2, onsets=(2, 3))
    m = FixedGraph(ctx, nodes=[0, 1, 2, 3], edges=[(0, 1)])
    e1, _ = ex1.run_batch([Q], m, train=False, phase="eval")
    e2, _ = ex2.run_batch([Q], m, train=False, phase="eval")
    assert e1[0].to_dict() == e2[0].to_dict()


def test_eval_seed_draws_only_the_evaluations_episodes() -> None:
    """eval.seed replaces the run seed for the evaluation's plans, backbone seed keys and seeds, and
    nothing else: validation and training passes keep following the run seed."""
    n, rounds = 6, 4
    roles = [f"role{i}" for i in range(n)]
    sched = AdversarySchedule(n_agents=n, rounds=rounds, count=3, rate=None, onset_rounds=(3, 4))
    paired = Executor(ExecutorConfig(n, rounds, roles, seed=7, eval_seed=2), Scripted(), sched)
    plain = {s: Executor(ExecutorConfig(n, rounds, roles, seed=s), Scripted(), sched) for s in (2, 7)}
    qs = [replace(Q, id=f"q{i}") for i in range(12)]

    def plans(ex: Executor, phase: str) -> list[dict]:
        return [ex.plan_for(q, phase).to_dict() for q in qs]

    assert plans(paired, "eval") == plans(plain[2], "eval") != plans(plain[7], "eval")
    assert plans(paired, "val") == plans(plain[7], "val") != plans(plain[2], "val")
    assert [paired.episode_seed(p) for p in ("eval", "val", "train0")] == [2, 7, 7]
    ctx = MethodContext(n_agents=n, rounds=rounds, roles=roles, seed=7)
    m = FixedGraph(ctx, nodes=list(range(n)), edges=[(0, 1)], mode="llm")
    bb = Scripted()
    paired.backbone = bb
    paired.run_batch([Q], m, train=False, phase="eval")
    assert bb.requests and all(r.seed_key.startswith(f"2/eval/{Q.id}/") and r.seed == 2 for r in bb.requests)
    bb.requests.clear()
    paired.run_batch([Q], m, train=False, phase="val")
    assert all(r.seed_key.startswith(f"7/val/{Q.id}/") and r.seed is None for r in bb.requests)


def test_adversary_plans_reach_only_a_method_that_declares_it_needs_them() -> None:
    """The answer key (who is adversarial) is oracle information: a method sees it only when it
    declares `needs_oracle` (TodyComm's no_credits ablation), and the run records that it did."""
    from tomacs.config import compose
    from tomacs.job.components import build

    for ablation, oracle in (("none", False), ("no_credits", True)):
        over = [
            "method=todycomm",
            f"method.ablation={ablation}",
            "attack=gt50",
            "embedder=hashing",
            "eval.size=2",
        ]
        comps = build(job_spec(compose(over)), need_train=False)
        _, state = comps.executor.run_batch(comps.test_qs[:2], comps.method, train=False, phase="eval")
        assert comps.method.needs_oracle is oracle
        assert (state.get("plans") is not None) is oracle


def test_results_record_an_oracle_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    over = ["method=todycomm", "attack=gt50", "embedder=hashing", "eval.size=2", "checkpoint=untrained"]
    plain = run_job(compose(over), "evaluate", tmp_path / "plain")
    oracle = run_job(compose([*over, "method.ablation=no_credits"]), "evaluate", tmp_path / "oracle")
    assert plain["oracle"] is False and oracle["oracle"] is True


def test_sample_index_is_an_argument_not_read_from_the_phase() -> None:
    """Each training epoch draws fresh replies because the trainer passes its epoch as the sample
    index; a phase that happens to contain digits does not change the draws."""
    from tomacs.config import compose
    from tomacs.job.components import build

    comps = build(job_spec(compose(["method=complete", "attack=gt50", "eval.size=4"])), need_train=False)
    qs = comps.test_qs[:4]

    def texts(phase: str, sample_index: int) -> list[str]:
        eps, _ = comps.executor.run_batch(
            qs, comps.method, train=False, phase=phase, sample_index=sample_index
        )
        return [o.text for ep in eps for r in ep.rounds for o in r]

    assert texts("train3", 0) == texts("train3", 0)
    assert texts("train3", 0) != texts("train3", 3)


@pytest.mark.parametrize(
    ("edges", "temporal", "budget", "mask_off", "says"),
    [
        ([(0, 2), (1, 2)], [], 1, None, "gives agent 2 in-degree 2 > budget 1"),
        ([(0, 1), (0, 2)], [], 1, None, "gives agent 0 out-degree 2 > budget 1"),
        ([(0, 1)], [(2, 1)], 1, None, "gives agent 1 in-degree 2 > budget 1"),  # temporal counts too
        ([(0, 1)], [], None, (0, 1), "has edge (0, 1), which the run's edge mask forbids"),
        ([(0, 1), (1, 2), (2, 0)], [], None, None, "is not a DAG"),
    ],
)
def test_a_graph_breaking_the_runs_constraints_is_an_error_naming_the_method(
    edges: list, temporal: list, budget: int | None, mask_off: tuple | None, says: str
) -> None:
    n, roles = 3, ["A", "B", "C"]
    mask = None
    if mask_off is not None:
        mask = np.ones((n, n), dtype=int)
        mask[mask_off] = 0
    cfg = ExecutorConfig(n, 2, roles, seed=1, mask=mask, in_budget=budget, out_budget=budget)
    sched = AdversarySchedule(n_agents=n, rounds=2, count=0, rate=None, onset_rounds=(2,))
    ex = Executor(cfg, Scripted(), sched)
    ctx = MethodContext(n_agents=n, rounds=2, roles=roles, seed=1)

    class Careless(FixedGraph):
        name = "careless"

        def act(self, state, t, history):  # noqa: ANN001
            return [
                RoundGraph(nodes=[0, 1, 2], edges=list(edges), temporal_edges=list(temporal)) for _ in history
            ]

    with pytest.raises(
        RuntimeError, match=r"method 'careless' returned a round-2 graph \(question .*\) that "
    ) as e:
        ex.run_batch([Q], Careless(ctx, nodes=[0, 1, 2], edges=[]), train=False, phase="eval")
    assert says in str(e.value)


@pytest.mark.parametrize("counted", [True, False])
def test_a_ctrl_c_whose_cancellation_asyncio_does_not_convert_is_still_a_keyboard_interrupt(
    counted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio.Runner turns its SIGINT's cancellation into KeyboardInterrupt only when it counted the signal
    and the batch task's cancel count returns to 0. Cancelled once more (a request task cancelled on the same
    signal: `counted`), or with the count zeroed after the signal landed (Runner.run installs its handler
    before it zeroes the count: simulated by a cancellation no handler counted), it re-raised
    CancelledError, and a Ctrl-C exited 1 with a traceback instead of 130 and the resume command."""
    import asyncio
    import signal

    ex = make()[0]

    async def cancelled(*args: object, **kwargs: object) -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        if counted:
            signal.raise_signal(signal.SIGINT)  # the Runner's handler cancels the task a second time
        await asyncio.sleep(1)

    monkeypatch.setattr(ex, "arun_batch", cancelled)
    with pytest.raises(KeyboardInterrupt):
        ex.run_batch([], None, train=False, phase="eval")  # type: ignore[arg-type]
