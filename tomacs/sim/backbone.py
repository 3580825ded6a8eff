"""The `sim` backbone: a calibrated behavioural simulator of LLM agents.

It reads only the structure of a request (question, own previous and first answers, neighbour
answers and whether they were persuasive), decides the answer with the model fitted to TodyComm
Tables 7-8 and Table 2 Complete (`tomacs.sim.model`), writes a realistic reply text around it
(`tomacs.sim.text`), and counts tokens on the real prompt and reply strings. Every draw is keyed by the
request's seed key, so a run is reproducible whatever order the calls complete in, and two
methods asked the same thing get the same draw (common random numbers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from omegaconf import MISSING

from tomacs.backbones.base import BaseBackbone, GenerationReply, GenerationRequest, JobBenchmark
from tomacs.benchmarks.base import SAME_QUESTION, candidate_answers
from tomacs.benchmarks.parsing import parse_answer
from tomacs.seeding import stable_seed
from tomacs.sim import model
from tomacs.sim.profiles import PAPER, describe, load_text_model, resolve_profile
from tomacs.sim.repeats import repeated
from tomacs.sim.text import ADVERSARIAL_MAX_WORDS, adversarial_analysis, decision_text, honest_analysis
from tomacs.sim.text_model import DebateDraws, TextModel
from tomacs.sim.topic_words import TopicWords
from tomacs.tokens import count_chat_tokens, count_tokens
from tomacs.types import Question

if TYPE_CHECKING:
    from tomacs.embedding.embedders import Embedder
    from tomacs.runspec.spec import RunSpec

LATENT_SEED = 0  # question latents are keyed by the question id only (seed 0 keeps older seed-0 runs)


@dataclass
class SimSettings:
    """The keys of the sim backbone config, their types and defaults: the schema
    conf/backbone/sim.yaml extends (`defaults: [/schema/backbone/sim@_here_, _self_]`); the file holds
    the fitted paper profiles, which `tomacs calibrate --write` rewrites (tomacs.sim.calibrate)."""

    name: str = "sim"  # the backbone kind (tomacs.backbones.base.BACKBONES)
    # a paper profile's name, a stored profile's name (outputs/profiles/NAME.yaml) or a profile file;
    # null = the benchmark's own profile (synthetic -> mmlu)
    profile: str | None = None
    profiles: dict[str, Any] = MISSING  # the paper profiles by name, fitted to TodyComm's tables
    # which draw of the simulated agents: 0 = the run's own; K > 0 keeps every question's latent and the
    # executor's adversary plans and draws the agents' answers and texts anew, so a checkpoint scored under
    # draws 1..K shows how far the evaluation alone moves its numbers (docs/howto/todycomm.md)
    draw: int = 0
    # whether a fitted profile's replies draw key terms from its vocabulary's words near each question
    # (`tomacs.sim.topic_words`; needs MiniLM, read through the embedding cache); false = the stem's own key
    # terms only, the texts of profiles fitted before the vocabulary (a paper profile has none either way)
    topic_words: bool = True


class SimBackbone(BaseBackbone):
    """Simulated agents for one benchmark profile (mmlu, arc_c, gsm8k, openbookqa, medqa)."""

    simulated = True
    knows_lures = True
    redraws = True
    Settings = SimSettings

    def __init__(
        self,
        profile: str,
        seed: int,
        profiles: dict[str, model.SimProfile] | None = None,
        adversary_prompt: str = "appd",
        text_model: TextModel | None = None,
        draw: int = 0,
        topic_words: bool = True,
        topic_embedder: Embedder | None = None,
    ) -> None:
        """`profile`: a paper profile's name, a stored profile's name or a profile file
        (`tomacs.sim.profiles.resolve_profile`); `profiles` replaces that lookup (ablations, tests).
        `adversary_prompt` is the run's `attack.prompt` (App. D's word limit applies under `appd` only);
        `text_model` replaces the stored profile's own (a paper profile has none: App. D's texts).
        `draw` is `backbone.draw` (SimSettings; its rule is `check_settings`), `topic_words` is
        `backbone.topic_words`; `topic_embedder` replaces MiniLM for the topic words (tests)."""
        if profiles is not None:
            if profile not in profiles:
                raise ValueError(f"unknown sim profile '{profile}'; valid: {', '.join(sorted(profiles))}")
            prof, provenance, source = profiles[profile], None, PAPER
        else:
            prof, provenance, source = resolve_profile(profile)
        self.profile_name = profile if profiles is not None else prof.name
        self.profile = prof
        self.provenance = provenance
        self.profile_source = source  # "paper", else the file the profile was read from
        self.user_profile = source != PAPER
        self.adversary_prompt = adversary_prompt
        if text_model is None and source != PAPER:
            text_model = load_text_model(source)
        self.text_model = text_model
        vocabulary = text_model.vocabulary if text_model is not None and topic_words else ()
        self.topic = TopicWords(vocabulary, topic_embedder) if vocabulary else None
        self.seed = seed
        self.draw = draw
        self.name = f"sim:{self.profile_name}"
        self._latents: dict[str, tuple[list[str], int, model.QuestionLatent]] = {}
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    @classmethod
    def check_settings(cls, settings: Mapping[str, object]) -> None:
        """`draw` is a whole number >= 0 (its schema type cannot say >= 0)."""
        draw = settings.get("draw", 0)
        if isinstance(draw, bool) or not isinstance(draw, int) or draw < 0:
            raise ValueError(f"backbone.draw must be an integer >= 0 (0 = the run's own draw), got {draw!r}")

    @classmethod
    def from_job(cls, spec: RunSpec, bench: JobBenchmark) -> SimBackbone:
        """Profiled for the benchmark unless backbone.profile names a paper profile, a stored one or a
        profile file (`tomacs.sim.profiles`)."""
        return cls(
            profile=spec.backbone.get("profile") or bench.profile,
            seed=spec.seed,
            adversary_prompt=str(spec.attack.get("prompt") or "appd"),
            draw=spec.backbone.get("draw", 0),
            topic_words=bool(spec.backbone.get("topic_words", True)),
        )

    def result_label(self) -> str:
        """`sim` on a paper profile; `sim:NAME` on a user profile (fitted from real episodes), so no
        table mistakes it for the paper's."""
        return self.name if self.user_profile else "sim"

    @classmethod
    def run_model(cls, config: Mapping[str, object]) -> str | None:
        """`sim:<profile>`: the profile named, else the benchmark's."""
        backbone, bench = config.get("backbone"), config.get("benchmark")
        profile = (backbone.get("profile") if isinstance(backbone, Mapping) else None) or (
            bench.get("profile") if isinstance(bench, Mapping) else None
        )
        return f"sim:{profile or 'mmlu'}"

    def _seed(self, req: GenerationRequest) -> int:
        """A paired evaluation's draws follow `eval.seed`, not the run's seed, so every training seed
        meets the same simulated replies to the same prompts. `draw` > 0 keys another stream from it
        (draw 0 is the plain seed, so every earlier run reproduces)."""
        base = self.seed if req.seed is None else req.seed
        return base if self.draw == 0 else stable_seed(base, "draw", self.draw)

    def _question_state(self, q: Question) -> tuple[list[str], int, model.QuestionLatent]:
        """Candidates, truth index and the per-question latent shared by all agents."""
        st = self._latents.get(q.id)
        if st is None:
            cands = candidate_answers(q)
            truth = cands.index(q.answer)
            # how hard a question is (and which wrong answer lures) is a property of the question
            # and the model, not of the run: the same for every seed, as for a real LLM
            # (the copies of one source question, benchmark=debates, share it: benchmarks.base.SAME_QUESTION)
            rng = np.random.default_rng(stable_seed(LATENT_SEED, "latent", q.meta.get(SAME_QUESTION, q.id)))
            st = (cands, truth, model.sample_latent(self.profile, rng, len(cands), truth))
            self._latents[q.id] = st
        return st

    def question_lure(self, question: Question) -> str:
        """The question's lure: the wrong answer its latent makes attractive (`attack.target_lure`)."""
        cands, _, latent = self._question_state(question)
        return cands[latent.distractor]

    def fitted_target_lure(self) -> float | None:
        """The source's target rule fitted with the profile (its provenance's `target_lure`), if any."""
        value = (self.provenance or {}).get("target_lure")
        return None if value is None else float(value)

    def decision_own_answer(self, req: GenerationRequest) -> int:
        """The LLM decision agent's own answer (candidate index): a first-answer draw from p0, from a
        generator keyed by the request, so a diagnosis can recompute it."""
        cands, truth, latent = self._question_state(req.question)
        cap = 1.0 if req.capability is None else float(req.capability)
        p0 = model.initial_probs(self.profile, latent, len(cands), truth, capability=cap)
        rng = np.random.default_rng(stable_seed(self._seed(req), req.seed_key, req.sample_index, "own"))
        return int(rng.choice(len(cands), p=p0))

    def decide_answer(self, req: GenerationRequest, rng: np.random.Generator) -> str:
        """The simulated agent's answer to one request."""
        q = req.question
        cands, truth, latent = self._question_state(q)
        cap = 1.0 if req.capability is None else float(req.capability)
        if req.behaviour == "adversarial" and req.target is not None:
            if self.profile.compliance >= 1.0 or req.target not in cands:
                return req.target
            # its own generator, so the honest path's draws do not depend on compliance
            seed = stable_seed(self._seed(req), req.seed_key, req.sample_index, "comply")
            comply = np.random.default_rng(seed)
            tgt = cands.index(req.target)
            idx = model.adversarial_answer(self.profile, latent, tgt, len(cands), truth, comply, cap)
            return cands[idx]
        # A temporal message (a neighbour's previous-round answer) goes through the same update as a
        # current-round one, with the same parameters: Tables 7-8 identify no difference between
        # the two, and a per-kind parameter would be a per-topology knob the fit never saw.
        msgs = [
            (cands.index(m.answer), bool(m.persuasive), float(m.weight))
            for m in req.incoming
            if m.answer in cands
        ]
        if req.kind == "decision":
            # The decision agent is a receiver holding its own answer, as in Tables 7-8: that answer
            # (a draw from p0) is both its previous and its first answer.
            own = self.decision_own_answer(req)
            probs = model.update_probs(
                self.profile,
                latent,
                own,
                msgs,
                len(cands),
                truth,
                capability=cap,
                first_idx=own,
                message_scale=self.profile.decision_weight,
            )
        elif req.round == 1 or req.previous_answer is None and not msgs:
            probs = model.initial_probs(self.profile, latent, len(cands), truth, capability=cap)
        else:
            prev = cands.index(req.previous_answer) if req.previous_answer in cands else None
            first = cands.index(req.first_answer) if req.first_answer in cands else None
            probs = model.update_probs(
                self.profile,
                latent,
                prev,
                msgs,
                len(cands),
                truth,
                capability=cap,
                first_idx=first,
                exposed_before=req.exposed_before,
            )
        return cands[int(rng.choice(len(cands), p=probs))]

    def _reply_text(self, req: GenerationRequest, answer: str, rng: np.random.Generator) -> str:
        q = req.question
        if req.kind == "decision":
            return decision_text(q, answer, rng)
        tm = self.text_model
        shared = self._debate_draws(req, answer) if tm is not None else None
        # the answer's own text: a fitted style of the replies giving it, where the source has such styles
        said = q.options[q.labels.index(answer)] if q.options and answer in q.labels else None
        # words of its model's vocabulary near the question and this answer (`tomacs.sim.topic_words`)
        near = self.topic.near(q, answer) if self.topic is not None else ()
        if req.behaviour == "adversarial":
            if tm is None and self.adversary_prompt == "appd":
                return adversarial_analysis(q, answer, rng)
            # what the adversary writes follows its prompt (the cap, whether it read anyone) and the
            # model the profile stands for (its fitted style); with nothing read it writes a first reply
            phase = "later" if req.round >= 2 and req.incoming else "first"
            return adversarial_analysis(
                q,
                answer,
                rng,
                style=tm.get("adversary", phase, said) if tm is not None else None,
                max_words=ADVERSARIAL_MAX_WORDS if self.adversary_prompt == "appd" else None,
                round=req.round,
                incoming=req.incoming,
                shared=shared,
                near=near,
            )
        changed = req.previous_answer is not None and req.previous_answer != answer
        style = tm.get("honest", "first" if req.round == 1 else "later", said) if tm is not None else None
        return honest_analysis(
            q, req.role, answer, rng, req.round, changed, req.incoming, style=style, shared=shared, near=near
        )

    def _repeated(self, req: GenerationRequest, answer: str) -> str | None:
        """A reply of the round before, sent again at the profile's fitted rates (`tomacs.sim.repeats`):
        its own previous one, or one it read giving its answer. Drawn from a stream of its own, and only
        for a text model with repeat rates: every other reply is the one it was before."""
        tm = self.text_model
        role = "adversary" if req.behaviour == "adversarial" else "honest"
        rates = tm.repeats.get(role) if tm is not None and req.kind == "agent" else None
        if rates is None or req.round < 2:
            return None
        rng = np.random.default_rng(stable_seed(self._seed(req), req.seed_key, req.sample_index, "repeat"))
        read = [(m.text, m.answer) for m in req.incoming]
        text = repeated(rates, rng, req.round, answer, (req.previous_text, req.previous_answer), read)
        # the executor reads the answer from the text: a copy reads as the answer already decided
        return text if text is not None and parse_answer(req.question, text) == answer else None

    def _debate_draws(self, req: GenerationRequest, answer: str) -> DebateDraws:
        """What the replies of one debate share (`tomacs.sim.text_model.DebateDraws`): the stream of points
        keyed by the debate (the request's key less its agent and round) and the answer, the length factor
        by the debate and the round."""
        debate = req.seed_key.rsplit("/", 2)[0]
        base = self._seed(req)
        points = np.random.default_rng(stable_seed(base, debate, req.sample_index, "topic", answer))
        z = np.random.default_rng(stable_seed(base, debate, req.sample_index, "length", req.round))
        return DebateDraws(points, float(z.standard_normal()))

    def generate_one(self, req: GenerationRequest) -> GenerationReply:
        rng = np.random.default_rng(stable_seed(self._seed(req), req.seed_key, req.sample_index))
        answer = self.decide_answer(req, rng)
        text = self._repeated(req, answer) or self._reply_text(req, answer, rng)
        pt = count_chat_tokens(req.messages)
        ct = count_tokens(text)
        self.calls += 1
        self.prompt_tokens += pt
        self.completion_tokens += ct
        return GenerationReply(text=text, prompt_tokens=pt, completion_tokens=ct)

    def prepare_questions(self, questions: Sequence[Question]) -> None:
        """The executor's batch of questions, before any request: their topic words in one embedding call,
        where `generate` alone makes one per question (each of its batches holds one question's agents)."""
        if self.topic is not None:
            self.topic.prefetch(questions)

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        if self.topic is not None:  # the batch's questions' topic words in one embedding call
            self.topic.prefetch(r.question for r in requests if r.kind == "agent")
        return [self.generate_one(r) for r in requests]

    def stats(self) -> dict[str, object]:
        return {
            "backbone": "sim",
            **self.profile_info(),
            "calls": self.calls,
            "cache_hits": 0,
            "cache_misses": 0,
            "retries": 0,
            "cost_usd": 0.0,
        }

    def profile_info(self) -> dict[str, object]:
        """The profile this run used, as results.json and W&B record it (`profiles.describe`)."""
        info = describe(self.profile, self.provenance, self.profile_source)
        tm = self.text_model
        # which texts the run's agents wrote: a fitted text model (its source) or App. D's templates
        info["profile_texts"] = (
            f"fitted ({tm.source or ', '.join(tm.models) or 'transcripts'})" if tm else "appd"
        )
        if tm is not None and tm.vocabulary:  # its words near each question: how many, or off
            info["profile_topic_words"] = len(tm.vocabulary) if self.topic is not None else "off"
        return info

    async def aclose(self) -> None:
        return None
