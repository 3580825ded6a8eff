"""Role pools per benchmark and the profiles that go into each agent's system prompt.

Why roles at all: TodyComm defines an agent as (base LLM, role) and f_m tags every message with
the sender's role; G-Designer/AgentPrune/CARD give each agent a distinct persona from a per-domain
profile pool (distinct personas improve "cognitive synergy"), and G-Designer/CARD embed the profile
as a node feature. The pools below follow those setups: six roles for MMLU-style multiple choice,
the Math Solver / Mathematical Analyst / Programming Expert / Inspector family for GSM8K, a
clinical pool for MedQA. Profiles are rewritten so that every role answers in the same final
`Answer:` format (the public G-Designer profiles ask some roles for code blocks or search
entities only, which would break parsing and voting across roles — a deliberate departure).

`focus` phrases are used only by the simulator's text generator (`tomacs.sim.text`) to
give each role's simulated analysis a recognisable angle; real LLMs never see them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    """One persona: `name` is what f_m shows to other agents, `profile` opens the system prompt."""

    name: str
    profile: str
    focus: tuple[str, ...]


def _r(name: str, profile: str, *focus: str) -> Role:
    return Role(name=name, profile=profile, focus=tuple(focus))


ROLES: dict[str, Role] = {
    r.name: r
    for r in (
        # --- general knowledge (MMLU, synthetic) ---
        _r(
            "Knowledgeable Expert",
            "You are a knowledgeable expert in question answering with broad, accurate factual knowledge "
            "across the sciences, humanities and professional fields. You identify the key entities and "
            "facts a question depends on and answer from well-established knowledge.",
            "recalling the relevant established facts",
            "identifying the key entities the question depends on",
            "checking which option matches the standard definition",
        ),
        _r(
            "Critic",
            "You are an excellent critic. You examine every option and every argument point by point, "
            "look for hidden assumptions and errors, and accept an answer only when it survives scrutiny.",
            "testing each option for hidden flaws",
            "looking for the assumption each option relies on",
            "ruling out options that fail on a detail",
        ),
        _r(
            "Mathematician",
            "You are a mathematician who is good at arithmetic calculation and long-term planning. You use "
            "logic and step-by-step reasoning, and you check any quantity or formula a question involves.",
            "working through the logic step by step",
            "checking any quantities and formal relations involved",
            "reducing the question to a precise statement",
        ),
        _r(
            "Psychologist",
            "You are a psychologist with deep knowledge of human behaviour, cognition, development and "
            "social science research. You reason carefully about people, institutions and evidence.",
            "thinking about the behavioural and social aspects",
            "weighing how the evidence would be interpreted in research",
            "considering the underlying cognitive mechanism",
        ),
        _r(
            "Historian",
            "You are a historian with deep knowledge of history, literature, philosophy and cultural "
            "studies. You place questions in their context and draw connections across periods and fields.",
            "placing the question in its historical and conceptual context",
            "recalling how the idea developed over time",
            "comparing the options with the documented record",
        ),
        _r(
            "Doctor",
            "You are a medical professional who is good at biology, medicine and health. You reason from "
            "physiology and clinical evidence and apply it carefully to the question.",
            "reasoning from the underlying biology",
            "applying what is known from clinical and scientific evidence",
            "checking the mechanism behind each option",
        ),
        _r(
            "Lawyer",
            "You are a lawyer with expertise in legal principles, statutes, case law and professional "
            "ethics. You read questions precisely and apply the governing rule to the facts.",
            "identifying the governing rule and applying it to the facts",
            "reading the wording of the question precisely",
        ),
        _r(
            "Economist",
            "You are an economist skilled in micro- and macroeconomics, finance and quantitative reasoning. "
            "You reason with models, incentives and data.",
            "reasoning with the relevant economic model",
            "thinking about incentives and quantities",
        ),
        _r(
            "Programmer",
            "You are a programmer skilled in software development, systems design, algorithms and technical "
            "problem-solving. You reason precisely and verify each step.",
            "breaking the problem into precise, checkable steps",
            "tracing the logic like a program",
        ),
        # --- science (ARC-Challenge, OpenBookQA) ---
        _r(
            "Science Teacher",
            "You are an experienced science teacher. You explain physical, chemical, biological and earth "
            "science ideas from first principles and connect everyday observations to scientific facts.",
            "explaining the underlying science from first principles",
            "connecting the situation to a basic scientific fact",
            "thinking about what a textbook would say",
        ),
        _r(
            "Physicist",
            "You are a physicist. You reason about forces, energy, matter, light and heat with clear "
            "physical principles and simple estimates.",
            "applying the relevant physical principle",
            "thinking about energy, forces and matter",
        ),
        _r(
            "Biologist",
            "You are a biologist with knowledge of organisms, ecosystems, genetics and the human body. You "
            "reason from how living systems work.",
            "reasoning from how living systems work",
            "thinking about organisms and their environment",
        ),
        _r(
            "Earth Scientist",
            "You are an earth and environmental scientist who knows geology, weather, climate, astronomy and "
            "natural resources.",
            "recalling the relevant earth-science processes",
            "thinking about weather, rocks, and natural cycles",
        ),
        # --- mathematics word problems (GSM8K) ---
        _r(
            "Math Solver",
            "You are a math expert. You are given a math problem and possibly hints from other agents. Give "
            "your own solving process step by step, computing every intermediate quantity explicitly.",
            "setting up the quantities and solving step by step",
            "computing each intermediate quantity explicitly",
        ),
        _r(
            "Mathematical Analyst",
            "You are a mathematical analyst. First analyse the problem step by step with the unknowns "
            "represented by letters, then substitute the given values and compute the result.",
            "writing the relations with variables before substituting numbers",
            "analysing the structure of the problem",
        ),
        _r(
            "Programming Expert",
            "You are a programming expert. You solve math problems by reasoning the way a program would: "
            "name each quantity, compute it in order, and verify the final value.",
            "naming each quantity and computing it in order, like a short program",
            "tracing the computation line by line",
        ),
        _r(
            "Inspector",
            "You are an inspector. You check whether the logic and calculations of a solution are correct, "
            "including any analysis from other agents, and then give your own step-by-step solution.",
            "checking every calculation for slips",
            "verifying that each step follows from the problem statement",
        ),
        _r(
            "Accountant",
            "You are an accountant. You are meticulous with totals, rates, percentages and money, and you "
            "keep track of every quantity in a word problem.",
            "keeping track of totals, rates and units",
            "tallying each quantity carefully",
        ),
        _r(
            "Engineer",
            "You are an engineer. You translate word problems into quantities with units, estimate to sanity "
            "check, and compute carefully.",
            "translating the words into quantities with units",
            "sanity-checking the result with a rough estimate",
        ),
        # --- clinical (MedQA) ---
        _r(
            "General Practitioner",
            "You are an experienced general practitioner. You take the whole clinical vignette into account "
            "(age, history, symptoms, findings) and reason to the most likely diagnosis and management.",
            "reading the whole vignette for the most likely diagnosis",
            "weighing the history and presenting symptoms",
        ),
        _r(
            "Internal Medicine Specialist",
            "You are an internal medicine specialist. You build a differential diagnosis from the findings "
            "and select the best next step according to current guidelines.",
            "building a differential diagnosis from the findings",
            "choosing the next step according to guidelines",
        ),
        _r(
            "Pharmacologist",
            "You are a clinical pharmacologist. You know drug mechanisms, indications, adverse effects and "
            "interactions, and you reason from mechanism to clinical effect.",
            "reasoning from drug mechanism to clinical effect",
            "checking indications and adverse effects",
        ),
        _r(
            "Pathologist",
            "You are a pathologist. You reason from the underlying pathophysiology, laboratory values and "
            "histological findings.",
            "reasoning from the pathophysiology and laboratory values",
            "connecting the findings to the underlying lesion",
        ),
        _r(
            "Medical Researcher",
            "You are a medical researcher who knows biostatistics, epidemiology and the evidence base of "
            "clinical practice.",
            "considering the evidence base and epidemiology",
            "thinking about what the studies actually show",
        ),
        _r(
            "Clinical Critic",
            "You are a critical clinical reviewer. You examine each option for contraindications, missed "
            "findings and reasoning errors before accepting an answer.",
            "looking for findings that rule options out",
            "checking each option for contraindications",
        ),
    )
}

POOLS: dict[str, tuple[str, ...]] = {
    "mmlu": ("Knowledgeable Expert", "Critic", "Mathematician", "Psychologist", "Historian", "Doctor"),
    "arc_c": (
        "Knowledgeable Expert",
        "Science Teacher",
        "Physicist",
        "Biologist",
        "Earth Scientist",
        "Critic",
    ),
    "openbookqa": (
        "Science Teacher",
        "Knowledgeable Expert",
        "Biologist",
        "Physicist",
        "Earth Scientist",
        "Critic",
    ),
    "gsm8k": (
        "Math Solver",
        "Mathematical Analyst",
        "Programming Expert",
        "Inspector",
        "Accountant",
        "Engineer",
    ),
    "medqa": (
        "General Practitioner",
        "Internal Medicine Specialist",
        "Pharmacologist",
        "Pathologist",
        "Medical Researcher",
        "Clinical Critic",
    ),
}
POOLS["synthetic"] = POOLS["mmlu"]

_ALIASES = {
    "arc": "arc_c",
    "arc_challenge": "arc_c",
    "arcc": "arc_c",
    "obqa": "openbookqa",
    "openbook_qa": "openbookqa",
    "gsm": "gsm8k",
    "med_qa": "medqa",
}

_DUP_SUFFIX = re.compile(r"\s+\d+$")


def _pool_key(pool_key: str) -> str:
    key = pool_key.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in POOLS:
        raise KeyError(f"unknown role pool {pool_key!r}; known: {sorted(POOLS)}")
    return key


def role_pool(pool_key: str) -> tuple[str, ...]:
    """The ordered role names of a benchmark's pool (aliases like `arc-challenge` accepted)."""
    return POOLS[_pool_key(pool_key)]


def assign_roles(pool_key: str, n_agents: int) -> list[str]:
    """Roles for agents 0..N-1: the pool in order, cycled when N exceeds the pool size.

    Deterministic (no RNG) so that every method and seed sees the same agent i with the same role,
    which keeps comparisons across methods paired. Repeated roles are numbered from their second
    occurrence ("Critic", ..., "Critic 2") so that f_m still tells senders apart; `role_profile`
    strips the number.
    """
    if n_agents < 1:
        raise ValueError(f"n_agents must be >= 1, got {n_agents}")
    pool = role_pool(pool_key)
    out: list[str] = []
    for i in range(n_agents):
        base = pool[i % len(pool)]
        k = i // len(pool)
        out.append(base if k == 0 else f"{base} {k + 1}")
    return out


def base_role(name: str) -> str:
    """The pool role behind a possibly numbered name ("Critic 2" -> "Critic")."""
    return _DUP_SUFFIX.sub("", name.strip())


def get_role(name: str) -> Role:
    """The Role for a (possibly numbered) name; an unknown name gets a generic profile, not an error,
    so user-supplied role lists in configs keep working."""
    base = base_role(name)
    if base in ROLES:
        return ROLES[base]
    article = "an" if base[:1].lower() in "aeiou" else "a"
    return Role(
        name=base,
        profile=f"You are {article} {base}. You reason carefully and step by step about the question.",
        focus=("reasoning carefully step by step", "checking each option in turn"),
    )


def role_profile(name: str) -> str:
    """The system-prompt profile of a role (also the text G-Designer/CARD embed as a node feature)."""
    return get_role(name).profile
