"""What a job (or a sweep) will cost before it makes a paid call: `tomacs plan` and a job's plan line.

Why a dry run and not a formula: the number of calls depends on code that changes (sparse graphs
skip agents, a vote decision makes no call, TodyComm samples who speaks), and the prompt length on
prompts that change. So the real executor runs the job's real questions and prompts on a stand-in
backbone (`PlanBackbone`) that counts every request and its tokens with the counter the LLM
backbone uses for estimates, and answers with a stand-in reply: the cached reply where the exact
request is in the response cache (a resumed run counts its cache hits exactly), else the
simulator's reply for that agent, its length fitted to the completions seen in the cache.

What is exact and what is not:
* static methods: calls are exact; tokens follow the stand-in replies' lengths;
* learned methods: who speaks is sampled, so training prints the bound (every agent speaks in
  every round, every epoch runs) and the expected value of the untrained policy, scaled from a dry
  run of one epoch (epochs repeat the same questions); validation is the untrained greedy policy's;
* early stopping makes the epoch count uncertain: the figures assume every epoch runs; the value
  at the patience minimum is given beside them;
* wall time replays the executor's waves of concurrent requests (a round of a batch, a level of a
  chain) at the endpoint's concurrency and a latency that is given (the response cache does not
  record latency, so none is measured from it); the simulator has none. MiniLM's time is at the
  rate earlier jobs measured here (tomacs.launch.embed_rate), else at a rate timed now on a sample;
* a reply is paid unless it is already in the response cache or repeats an earlier request of the
  same job (the response cache serves the repeat in the real run too): the two are counted apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from omegaconf import DictConfig, OmegaConf

from tomacs.backbones.base import GenerationReply, GenerationRequest, backbone_class, backbone_kind
from tomacs.embedding.embedders import HashingEmbedder
from tomacs.runspec.spec import RunSpec, TrainSpec
from tomacs.tokens import count_chat_tokens, count_tokens

if TYPE_CHECKING:
    from tomacs.job.components import Components

DEFAULT_COMPLETION_TOKENS = 120  # when the cache has no completions of the model yet
DEFAULT_LATENCY_S = 1.0
_MIN_OBSERVED = 20  # cached completions of the model needed before their mean length is used


@dataclass
class Count:
    """Calls and tokens of one phase (agents) or of the decision agent."""

    calls: int = 0
    cached: int = 0  # replies already in the response cache before the job
    prompt: int = 0
    completion: int = 0
    paid_prompt: int = 0
    paid_completion: int = 0
    waves: list[int] = field(default_factory=list)  # paid requests in flight together, per wave
    repeats: int = 0  # requests that repeat an earlier one of the job (the cache serves them then)

    @property
    def paid(self) -> int:
        return self.calls - self.cached - self.repeats

    def scaled(self, f: float) -> Count:
        return Count(
            round(self.calls * f),
            round(self.cached * f),
            round(self.prompt * f),
            round(self.completion * f),
            round(self.paid_prompt * f),
            round(self.paid_completion * f),
            [round(w * f) for w in self.waves] if f < 1 else self.waves * max(1, round(f)),
            round(self.repeats * f),
        )

    def __add__(self, o: Count) -> Count:
        return Count(
            self.calls + o.calls,
            self.cached + o.cached,
            self.prompt + o.prompt,
            self.completion + o.completion,
            self.paid_prompt + o.paid_prompt,
            self.paid_completion + o.paid_completion,
            self.waves + o.waves,
            self.repeats + o.repeats,
        )

    def wall_s(self, latency: float, concurrency: int) -> float:
        return sum(math.ceil(w / concurrency) for w in self.waves if w > 0) * latency


def observed_completion_tokens(
    cache_path: Path | None, model: str | None, recent: int = 2000
) -> float | None:
    """Mean completion tokens of the model's most recent cached replies (None: too few to say)."""
    if cache_path is None or model is None or not cache_path.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{cache_path}?mode=ro", uri=True)) as c:
            rows = c.execute(
                "SELECT completion_tokens FROM responses WHERE model = ? ORDER BY created DESC LIMIT ?",
                (model, recent),
            ).fetchall()
    except sqlite3.Error:
        return None
    vals = [int(r[0]) for r in rows if r[0]]
    return float(np.mean(vals)) if len(vals) >= _MIN_OBSERVED else None


def fit_length(text: str, target: float | None) -> str:
    """The stand-in reply with about `target` completion tokens: the body is cut or repeated, the
    closing line (where the answer is) kept, so the reply still parses as the simulator meant."""
    if target is None:
        return text
    have = count_tokens(text)
    if have <= 0 or abs(have - target) <= 0.1 * target:
        return text
    body, _, last = text.rpartition("\n")
    words = body.split() or text.split()
    n = max(1, round(len(words) * (target - count_tokens(last)) / max(1, count_tokens(body or text))))
    filled = [words[i % len(words)] for i in range(n)]
    return " ".join(filled) + ("\n" + last if body else "")


class PlanBackbone:
    """The stand-in backbone of a dry run (see the module docstring). `phase` is set by the caller."""

    def __init__(
        self, sim: Any, real: Any | None, completion_tokens: float | None, where: dict[str, str] | None = None
    ) -> None:
        self.sim, self.real = sim, real
        self.name = getattr(real, "name", None) or sim.name
        self.completion_tokens = completion_tokens
        self.where = where if where is not None else {"phase": "test"}
        self.counts: dict[tuple[str, str], Count] = {}
        self._seen: dict[str, dict[str, Any]] = {}
        self._last_key = ""
        self._fut: asyncio.Future[None] | None = None
        self._wave = 0
        self._wave_key = ("test", "agent")

    @property
    def phase(self) -> str:
        return self.where["phase"]

    @phase.setter
    def phase(self, value: str) -> None:
        self.where["phase"] = value

    def count(self, phase: str, kind: str) -> Count:
        return self.counts.setdefault((phase, kind), Count())

    def _cached(self, req: GenerationRequest) -> tuple[dict[str, Any] | None, bool]:
        """(the cached record, whether the request repeats one of this dry run): a repeated
        request is served by the response cache in the real run too (the first reply), so it is
        not paid twice. A repeat's record says whether its first reply was in the cache already."""
        cache = getattr(self.real, "cache", None)
        if cache is None or self.real is None:
            return None, False
        key = self.real.cache_key(req)
        if key in self._seen:
            return self._seen[key], True
        rec = cache.get(key)
        self._last_key = key
        return rec, False

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        stand_ins = await self.sim.generate(requests)
        out, paid = [], 0
        for req, sr in zip(requests, stand_ins, strict=True):
            c = self.count(self.phase, req.kind)
            c.calls += 1
            rec, repeat = self._cached(req)
            if rec is not None:
                text, pt, ct = rec["text"], int(rec["prompt_tokens"]), int(rec["completion_tokens"])
                if repeat and not rec["in_cache"]:
                    c.repeats += 1  # paid once, at its first request in the job
                else:
                    c.cached += 1  # in the response cache before the job
            else:
                text = fit_length(sr.text, self.completion_tokens)
                pt, ct = count_chat_tokens(req.messages), count_tokens(text)
                c.paid_prompt += pt
                c.paid_completion += ct
                paid += 1
            if not repeat and self.real is not None:
                self._seen[self._last_key] = {
                    "text": text,
                    "prompt_tokens": pt,
                    "completion_tokens": ct,
                    "in_cache": rec is not None,
                }
            c.prompt += pt
            c.completion += ct
            out.append(GenerationReply(text, pt, ct, cached=rec is not None))
        await self._join_wave(paid, (self.phase, requests[0].kind) if requests else self._wave_key)
        return out

    async def _join_wave(self, paid: int, key: tuple[str, str]) -> None:
        """Requests that the executor has in flight together form one wave: every coroutine that
        reaches the backbone before the loop turns joins it, then all go on at once."""
        if self._fut is None:
            loop = asyncio.get_running_loop()
            self._fut, self._wave, self._wave_key = loop.create_future(), 0, key
            loop.call_soon(self._close_wave)
        self._wave += paid
        await self._fut

    def _close_wave(self) -> None:
        fut, self._fut = self._fut, None
        self.count(*self._wave_key).waves.append(self._wave)
        if fut is not None and not fut.done():
            fut.set_result(None)

    def stats(self) -> dict[str, object]:
        return {"backbone": self.name}

    async def aclose(self) -> None:
        return None


class CountingEmbedder(HashingEmbedder):
    """Counts the distinct texts a job would embed, at the dry run's speed (feature hashing at the
    real embedder's dimension, so a learned method's network takes its input unchanged)."""

    def __init__(self, name: str, dim: int, phase: Any) -> None:
        super().__init__(dim)
        self.kind = name
        self.phase = phase  # reads the dry run's current phase
        self.texts: dict[str, set[str]] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.setdefault(self.phase(), set()).update(texts)
        return super().embed(texts)


def counting_embedder(spec: RunSpec, phase: Callable[[], str]) -> CountingEmbedder:
    """The dry run's one embedder, at the dimension of the job's (`spec.embedder`, settled): handed
    to the build as its `embedder`, so the executor, the credibility centroid and a learned method
    embed through it."""
    from tomacs.embedding.embedders import DEFAULT_EMBEDDER, EMBEDDER_DIMS

    name = spec.embedder or DEFAULT_EMBEDDER
    if name not in EMBEDDER_DIMS:
        raise ValueError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDER_DIMS)}")
    return CountingEmbedder(name, EMBEDDER_DIMS[name], phase)


_MINILM_S_PER_TEXT: dict[tuple[str, str], tuple[float, int]] = {}
SAMPLE_MIN_TEXTS, SAMPLE_MIN_S, SAMPLE_MAX_S = 256, 3.0, 20.0


def minilm_settings(spec: RunSpec, device: str) -> tuple[str | None, str | None]:
    """(precision, backend) the job's MiniLM runs in (`embed.precision`, `embed.backend` resolved for
    its device); None for what cannot be resolved here (a setting this machine cannot run: the job
    itself says why)."""
    from tomacs.embedding import embedders

    out: list[str | None] = []
    for name, value in (
        ("resolve_precision", spec.embed.precision),
        ("resolve_backend", spec.embed.backend),
    ):
        resolve = getattr(embedders, name, None)
        try:
            out.append(None if resolve is None else resolve(value, device))
        except Exception:  # noqa: BLE001
            out.append(None)
    return out[0], out[1]


def minilm_seconds_per_text(
    samples: list[str], precision: str | None = None, backend: str | None = None
) -> tuple[float, int] | None:
    """(seconds per text, texts timed) of MiniLM on this machine's CPU, timed now on the job's own
    texts, encoded again and again until at least SAMPLE_MIN_TEXTS texts and SAMPLE_MIN_S seconds
    (at most SAMPLE_MAX_S): one short encode swung 3.5x with the load. Model load excluded; None
    when the model is not available offline."""
    key = (str(precision), str(backend))
    if key in _MINILM_S_PER_TEXT:
        return _MINILM_S_PER_TEXT[key]
    from tomacs.embedding.embedders import MiniLMEmbedder

    texts = list(dict.fromkeys(samples))[:SAMPLE_MIN_TEXTS] or ["a sample text to embed"]
    try:
        given: dict[str, Any] = {
            "precision": precision or "auto",
            **({"backend": backend} if backend else {}),
        }
        emb = MiniLMEmbedder(device="cpu", cache=None, **given)
        emb._encode(texts[:2])  # warm: load and first call
        n, t0 = 0, time.perf_counter()
        while True:
            emb._encode(texts)
            n += len(texts)
            took = time.perf_counter() - t0
            if (n >= SAMPLE_MIN_TEXTS and took >= SAMPLE_MIN_S) or took >= SAMPLE_MAX_S:
                break
    except Exception:  # noqa: BLE001 - no model offline: the plan says "unknown"
        return None
    _MINILM_S_PER_TEXT[key] = (took / n, n)
    return _MINILM_S_PER_TEXT[key]


def minilm_rate(spec: RunSpec, device: str, samples: list[str]) -> tuple[float | None, str]:
    """(seconds per text, where the rate comes from) of the job's MiniLM: the rate earlier jobs on this
    machine measured over every text they encoded (tomacs.launch.embed_rate), else one timed now on
    a sample of the job's texts."""
    from tomacs.launch.embed_rate import measured_rate

    precision, backend = minilm_settings(spec, device)
    how = ", ".join(x for x in (precision, backend) if x)
    measured = measured_rate(spec, device, precision, backend)
    if measured is not None:
        rate, jobs, path = measured
        return 1.0 / rate, (
            f"MiniLM {rate:.3g} texts/s on {device}{f' ({how})' if how else ''}, measured by "
            f"{jobs} earlier job{'s' if jobs > 1 else ''} ({path})"
        )
    timed = minilm_seconds_per_text(samples, precision, backend)
    if timed is None:
        return None, "MiniLM is not available offline here: its time is unknown"
    s, n = timed
    return s, (
        f"MiniLM {1.0 / s:.3g} texts/s on cpu{f' ({how})' if how else ''}, sampled now over {n} texts "
        "(no earlier job here recorded its rate)"
    )


@dataclass
class JobPlan:
    """The dry run's counts of one job and what they cost."""

    name: str
    backbone: str
    method: str
    learned: bool
    budget: str
    epochs: int  # epochs the figures assume (every epoch runs)
    epochs_min: int  # epochs at the patience minimum
    train_epoch: Count  # expected, one epoch (agents + decision folded per kind below)
    train_epoch_bound: Count
    val_epoch: Count
    test: Count
    decision_train_epoch: Count
    decision_val_epoch: Count
    decision_test: Count
    price: tuple[float, float] | None  # USD per token (prompt, completion); None = unknown
    concurrency: int
    embed_kind: str | None
    embed_texts: int  # over the whole job (epochs scaled)
    embed_s: float | None
    sampled: str = ""  # which phases were scaled from a sample of questions
    simulated: bool = False  # the simulator answers at once: no latency per call
    embed_basis: str = ""  # where the embedding rate comes from (MiniLM: measured or sampled)
    other_budgets: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def phase(self, epochs: int | None = None, bound: bool = False) -> dict[str, Count]:
        e = self.epochs if epochs is None else epochs
        tr = self.train_epoch_bound if bound else self.train_epoch
        return {
            "train": tr.scaled(e) if e else Count(),
            "validation": self.val_epoch.scaled(e) if e else Count(),
            "test": self.test,
            "decision": (self.decision_train_epoch.scaled(e) if e else Count())
            + (self.decision_val_epoch.scaled(e) if e else Count())
            + self.decision_test,
        }

    def total(self, epochs: int | None = None, bound: bool = False) -> Count:
        out = Count()
        for c in self.phase(epochs, bound).values():
            out = out + c
        return out

    def dollars(self, c: Count) -> float | None:
        if self.price is None:
            return None
        return c.paid_prompt * self.price[0] + c.paid_completion * self.price[1]

    def latency(self, latency: float) -> float:
        """Seconds per call this job waits: none on the simulator."""
        return 0.0 if self.simulated else latency

    def wall_s(self, latency: float, epochs: int | None = None) -> float:
        llm = self.total(epochs).wall_s(self.latency(latency), self.concurrency)
        share = 1.0 if epochs is None or not self.epochs else epochs / self.epochs
        return llm + (self.embed_s or 0.0) * share

    def summary(self, latency: float) -> dict[str, Any]:
        ph, tot, bound = self.phase(), self.total(), self.total(bound=True)
        return {
            "job": self.name,
            "budget": self.budget,
            "epochs": self.epochs,
            "epochs_min": self.epochs_min,
            "calls": {k: v.calls for k, v in ph.items()},
            "calls_total": tot.calls,
            "calls_bound": bound.calls,
            "cached": tot.cached,
            "repeats": tot.repeats,
            "paid_calls": tot.paid,
            "prompt_tokens": tot.prompt,
            "completion_tokens": tot.completion,
            "paid_prompt_tokens": tot.paid_prompt,
            "paid_completion_tokens": tot.paid_completion,
            "usd": self.dollars(tot),
            "usd_bound": self.dollars(bound),
            "usd_at_patience_min": self.dollars(self.total(self.epochs_min)),
            "embed_texts": self.embed_texts,
            "embed_s": self.embed_s,
            "embed_basis": self.embed_basis,
            "wall_s": self.wall_s(latency),
            "latency_s": self.latency(latency),
            "concurrency": self.concurrency,
            "other_budgets": self.other_budgets,
            "sampled": self.sampled,
            "notes": self.notes,
        }


def backbone_price(spec: RunSpec) -> tuple[float, float] | None:
    """USD per prompt and completion token: `backbone.price`, else litellm's offline price table."""
    b = spec.backbone
    if backbone_class(b).simulated:
        return (0.0, 0.0)
    if b.get("price"):
        return (float(b.price.input_per_mtok) / 1e6, float(b.price.output_per_mtok) / 1e6)
    from tomacs.backbones.llm import import_litellm

    litellm = import_litellm()
    try:
        p, _ = litellm.cost_per_token(model=str(b.model), prompt_tokens=1_000_000, completion_tokens=0)
        _, c = litellm.cost_per_token(model=str(b.model), prompt_tokens=0, completion_tokens=1_000_000)
    except Exception:  # noqa: BLE001 - litellm has no price for this model
        return None
    return (float(p) / 1e6, float(c) / 1e6)


def _walk(comps: Any, qs: list[Any], train: bool, phase: str) -> None:
    from tomacs.execution.batches import walk

    if qs:
        # training runs each question `train.samples` times in its batch (tomacs.training.reinforce)
        k = comps.spec.train.samples if train else 1
        walk(
            comps.executor,
            comps.method,
            [q for q in qs for _ in range(k)],
            (comps.spec.train.batch_size if train else comps.spec.eval.batch_size) * k,
            train=train,
            phase=phase,
        )


def _sample(qs: list[Any], k: int | None, batch: int) -> tuple[list[Any], float]:
    """The first k questions (at least one whole batch: a wave of a part-filled batch is as long as a
    full one's, so scaling a smaller sample would overstate the wall time) and the scale factor."""
    if k is None:
        return qs, 1.0
    k = max(k, batch)
    if len(qs) <= k:
        return qs, 1.0
    return qs[:k], len(qs) / k


def _budget_epochs(train: TrainSpec) -> tuple[int, int]:
    epochs, patience = train.epochs, train.patience
    return epochs, (min(epochs, patience + 1) if patience is not None and train.val_size > 0 else epochs)


def plan_job(
    cfg: RunSpec | DictConfig,
    mode: str,
    sample: int | None = None,
    name: str = "",
    *,
    comps: Components | None = None,
) -> JobPlan:
    """Dry-run one job on the stand-in backbone; `sample` caps the questions dry-run per phase
    (the figures are then scaled, and say so).

    `cfg`: the job's spec (a composed config is made one). `comps`: the job's own build
    (`tomacs.job.components.build` of this spec), whose benchmark, questions and backbone the dry
    run then reuses instead of building its own; it walks fresh parts of its own (`rebuild`), so
    the job's method and credibility state stay untouched."""
    from tomacs.job.components import build, rebuild
    from tomacs.launch.spec import job_spec
    from tomacs.sim.backbone import SimBackbone

    spec = cfg if isinstance(cfg, RunSpec) else job_spec(cfg)
    where = {"phase": "test"}
    counting = counting_embedder(spec, lambda: where["phase"])
    job = comps if comps is not None else build(spec, need_train=(mode == "train"), embedder=counting)
    real = None if backbone_class(spec.backbone).simulated else job.backbone
    cache = getattr(real, "cache", None)
    target = observed_completion_tokens(
        Path(cache.path) if cache is not None else None, getattr(real, "model", None)
    )
    if real is not None and target is None:
        target = DEFAULT_COMPLETION_TOKENS
    max_tokens = getattr(real, "max_tokens", None)
    if target is not None and max_tokens:
        target = min(target, float(max_tokens))  # the server stops a reply there
    sim = SimBackbone(profile=spec.backbone.get("profile") or job.bench.profile, seed=spec.seed)
    pb = PlanBackbone(sim, real, target, where)
    comps = rebuild(job, backbone=pb, embedder=counting)  # the dry run's own method and executor
    method = comps.method
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    learned = bool(method.trainable)
    notes: list[str] = []
    sampled: list[str] = []
    epochs, epochs_min = _budget_epochs(spec.train)
    f_train = f_val = 1.0
    if mode == "train" and learned:  # what an epoch walks is the method's trainer's (its own data or not)
        from tomacs.training.core import trainer_of

        trainer = trainer_of(method)
        own = trainer.epochs(method)
        if own is not None:
            epochs = epochs_min = int(own)
        if trainer.walks_training:
            method.train_mode(True)
            pb.phase = "train"
            qs, f_train = _sample(comps.train_qs, sample, spec.train.batch_size)
            _walk(comps, qs, True, "train0")
        method.train_mode(False)
        pb.phase = "validation"
        vqs, f_val = _sample(comps.val_qs, sample, spec.train.batch_size)
        _walk(comps, vqs, False, "val")
        notes.append(trainer.plan_note)
    elif mode == "train" and comps.executor.crs is not None and comps.train_qs:
        epochs = epochs_min = 1  # the credibility warm-up streams the training questions once
        pb.phase = "train"
        qs, f_train = _sample(comps.train_qs, sample, spec.train.batch_size)
        _walk(comps, qs, False, "train0")
    else:
        epochs = epochs_min = 0
    method.train_mode(False)
    pb.phase = "test"
    tqs, f_test = _sample(comps.test_qs, sample, spec.eval.batch_size)
    _walk(comps, tqs, False, "eval")
    for what, f in (("train", f_train), ("validation", f_val), ("test", f_test)):
        if f != 1.0:
            sampled.append(f"{what} x{f:.3g}")

    tr = pb.count("train", "agent").scaled(f_train)
    dtr = pb.count("train", "decision").scaled(f_train)
    bound = tr
    if learned and tr.calls:  # everyone speaks: N x T agent calls per question
        full = len(comps.train_qs) * n * rounds
        paid = max(1, tr.paid)
        extra = max(
            0, full - tr.calls
        )  # the calls of agents the policy left out: paid, at the mean paid size
        bound = Count(
            full,
            tr.cached,
            tr.prompt + round(extra * tr.paid_prompt / paid),
            tr.completion + round(extra * tr.paid_completion / paid),
            tr.paid_prompt + round(extra * tr.paid_prompt / paid),
            tr.paid_completion + round(extra * tr.paid_completion / paid),
            [w * full // max(1, tr.calls) for w in tr.waves],
            tr.repeats,
        )
    embed_texts, embed_s, kind, basis = 0, None, None, ""
    seen = counting.texts
    if seen:
        kind = counting.kind
        # a training epoch embeds fresh replies; validation counted every epoch (its graphs move)
        per = {"train": f_train * epochs, "validation": f_val * epochs, "test": f_test}
        embed_texts = round(sum(len(ts) * per.get(ph, 1.0) for ph, ts in seen.items()))
        if kind == "minilm":
            s, basis = minilm_rate(spec, str(job.ctx.device), sorted(set().union(*seen.values())))
            embed_s = None if s is None else s * embed_texts
            notes.append(basis)
        else:
            embed_s = 0.0
    concurrency = int(spec.backbone.get("max_concurrency") or spec.concurrency)
    if target is not None and real is not None:
        notes.append(f"stand-in replies of about {target:.0f} completion tokens")
    return JobPlan(
        name=name or f"{comps.bench.name} {method.name} {spec.attack.name} seed={spec.seed}",
        backbone=str(pb.name),
        method=str(method.name),
        learned=learned and mode == "train",
        budget=spec.train.name,
        epochs=epochs,
        epochs_min=epochs_min,
        train_epoch=tr,
        train_epoch_bound=bound,
        val_epoch=pb.count("validation", "agent").scaled(f_val),
        test=pb.count("test", "agent").scaled(f_test),
        decision_train_epoch=dtr,
        decision_val_epoch=pb.count("validation", "decision").scaled(f_val),
        decision_test=pb.count("test", "decision").scaled(f_test),
        price=backbone_price(spec),
        concurrency=concurrency,
        embed_kind=kind,
        embed_texts=embed_texts,
        embed_s=embed_s,
        sampled=", ".join(sampled),
        notes=notes,
        simulated=real is None,
        embed_basis=basis,
    )


def other_budgets(plan: JobPlan, spec: RunSpec, latency: float) -> None:
    """The same learned job's cost at every other `train=` option (same sizes: the epochs differ)."""
    from tomacs.config import group_options
    from tomacs.paths import conf_dir

    if not plan.learned or plan.train_epoch.calls == 0:
        return
    for opt in group_options()["train"]:
        t = TrainSpec(**(OmegaConf.to_container(OmegaConf.load(conf_dir() / "train" / f"{opt}.yaml")) or {}))  # type: ignore[arg-type]
        if t.size != spec.train.size or t.val_size != spec.train.val_size:
            continue  # the dry run's questions are not this budget's
        e, e_min = _budget_epochs(t)
        plan.other_budgets[opt] = {
            "epochs": e,
            "calls": plan.total(e).calls,
            "usd": plan.dollars(plan.total(e)) or 0.0 if plan.price else float("nan"),
            "usd_bound": plan.dollars(plan.total(e, bound=True)) or 0.0 if plan.price else float("nan"),
            "usd_at_patience_min": plan.dollars(plan.total(e_min)) or 0.0 if plan.price else float("nan"),
            "wall_s": plan.wall_s(latency, e),
        }


def sweep_jobs(overrides: list[str], multirun: bool) -> list[list[str]]:
    """Every job of the command line, as `tomacs train` would launch it: a paper table's product
    (tomacs.launch.table_sweeps, what `table=` runs), else Hydra's own sweep expansion under -m."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from tomacs.config import ConfigError

    table = next((o.split("=", 1)[1] for o in overrides if o.lstrip("+").startswith("table=")), None)
    rest = [o for o in overrides if not o.lstrip("+").startswith("table=")]
    if table is not None:
        from tomacs.launch.table_sweeps import jobs

        return [[f"+table={table}", *job] for job in jobs(table, rest)]
    if not multirun:
        return [rest]
    try:
        parsed = OverridesParser.create().parse_overrides([o for o in rest if not o.startswith("hydra.")])
        (batch,) = BasicSweeper.split_arguments(parsed, None)
    except Exception as exc:
        raise ConfigError(f"cannot expand the sweep: {str(exc).strip().splitlines()[0]}") from exc
    return [list(job) for job in batch]


def budget_totals(plans: list[JobPlan], latency: float) -> dict[str, dict[str, float]]:
    """The sweep's calls and dollars at every training budget (static jobs cost the same in each)."""
    names = sorted({b for p in plans for b in p.other_budgets})
    out: dict[str, dict[str, float]] = {}
    for b in names:
        calls = usd = bound = wall = 0.0
        for p in plans:
            o = p.other_budgets.get(b)
            if o is None:
                t = p.total()
                calls += t.calls
                usd += p.dollars(t) or 0.0
                bound += p.dollars(p.total(bound=True)) or 0.0
                wall += p.wall_s(latency)
            else:
                calls += o["calls"]
                usd += o["usd"]
                bound += o["usd_bound"]
                wall += o["wall_s"]
        out[b] = {"calls": calls, "usd": usd, "usd_bound": bound, "wall_s": wall}
    return out


def job_plan_line(spec: RunSpec, mode: str, comps: Components | None = None) -> str:
    """The line a job prints when it starts. On the simulator it costs nothing (no dry run: a sim
    job must not slow down for it); on an LLM it is a dry run of up to 32 questions per phase, on
    the job's own build `comps` when given (`plan_job`), else on one of its own."""
    from tomacs.job.progress import _hms
    from tomacs.methods.registry import is_trainable, method_settings

    learns = mode == "train" and is_trainable(method_settings(spec).name)
    draws = f" x {spec.eval.draws} draws" if spec.eval.draws > 1 else ""
    test = f"test {spec.eval.size} questions{draws}"
    work = (
        f"train <= {spec.train.epochs} epochs x ({spec.train.size} + "
        f"{spec.train.val_size} validation) questions, {test}"
        if learns
        else test
    )
    if backbone_class(spec.backbone).simulated:
        return f"plan: {backbone_kind(spec.backbone)} backbone, $0 | {work}"
    try:
        p = plan_job(spec, mode, sample=32, comps=comps)
    except Exception as exc:  # noqa: BLE001 - the plan line must never stop the job
        return f"plan: unavailable ({type(exc).__name__}: {exc})"
    s = p.summary(DEFAULT_LATENCY_S)
    usd = "?" if s["usd"] is None else f"${s['usd']:.2f}"
    bound = "" if s["usd_bound"] in (None, s["usd"]) else f" (bound ${s['usd_bound']:.2f})"
    emb = ""
    if s["embed_texts"]:
        t = "?" if s["embed_s"] is None else _hms(s["embed_s"])
        emb = f" | embed {s['embed_texts']:,} {p.embed_kind} texts ({t})"
    return (
        f"plan: {s['calls_total']:,} LLM calls ({s['cached']:,} in the response cache, {s['repeats']:,} "
        f"repeats within the job), {usd}{bound}{emb} | job ETA "
        f"{_hms(s['wall_s'])} at {DEFAULT_LATENCY_S:g} s per call, {p.concurrency} in flight | {work} "
        "(details: tomacs plan with the same overrides)"
    )


def cached_rows(spec: RunSpec) -> int:
    """Replies of the job's model already in its response cache (0: none, or the simulator)."""
    b = spec.backbone
    if backbone_class(b).simulated:
        return 0
    c = b.get("cache")
    path = Path(str(c.get("path") or "")) if isinstance(c, Mapping) and c.get("enabled", True) else None
    if path is None or not path.is_file():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
            return int(
                con.execute("SELECT COUNT(*) FROM responses WHERE model = ?", (str(b.model),)).fetchone()[0]
            )
    except sqlite3.Error:
        return 0
