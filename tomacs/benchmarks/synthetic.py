"""The embedded default benchmark: exam-style questions generated from a seed, no files, no network.

Why it exists: every code path (prompts, token counts, embeddings, parsers, metrics) must run on a
laptop with nothing downloaded, on strings of realistic length. The questions read like MMLU/ARC
items (40-120 words, 4 options, 11 subjects, 6 templates) or GSM8K word problems (50-120 words,
integer answers computed from the generated numbers, 12 templates). The scenarios are fictional
(named places, cohorts, compounds), but most items are answerable by a reader: the "definition"
style templates use real textbook definitions and the quantitative ones are computed, so a real
LLM on the llamacpp/litellm path is scored on something meaningful.

Determinism and disjointness:

* question ``i`` of split ``s`` depends only on ``(seed, variant, s, i)`` (its own RNG stream),
  so a larger ``size`` extends a smaller one and ids such as ``synthetic-mc-test-00017`` are stable;
* train/validation/test are disjoint by construction: every question names at least one proper
  noun, and proper nouns are built from split-specific onsets (see ``_ONSETS``) / split-specific
  first names, so no text can occur in two splits.

``variant: mc`` uses simulator profile ``mmlu``; ``variant: numeric`` uses ``gsm8k``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tomacs.benchmarks.base import BenchmarkAdapter, BenchmarkSettings
from tomacs.seeding import stable_seed
from tomacs.types import LETTERS, Question, QuestionKind

__all__ = ["SyntheticBenchmark", "generate_mc", "generate_numeric"]

SPLITS = ("train", "validation", "test")
DEFAULT_SIZES = {"train": 1000, "validation": 200, "test": 500}
MC_WORDS = (40, 120)
NUMERIC_WORDS = (50, 120)

# ---------------------------------------------------------------------------------------------
# split-specific proper nouns

_ONSETS = {
    "train": ("Ar", "Bel", "Cor", "Dra", "Ely", "Fen", "Gal", "Hol", "Ist", "Jor"),
    "validation": ("Kal", "Lum", "Mor", "Nev", "Osk", "Pry", "Quin", "Ros", "Sar", "Tov"),
    "test": ("Ulm", "Vex", "Wyn", "Xan", "Yor", "Zel", "Ebr", "Olv", "Tral", "Brin"),
}
_MIDS = ("a", "en", "i", "o", "u", "ae", "ey")
_ENDS = ("dor", "mir", "thos", "van", "lia", "ric", "nor", "sk", "wen", "tal", "bury", "mont")

_FIRST_NAMES = {
    "train": (
        ("Aisha", "she"),
        ("Ben", "he"),
        ("Carmen", "she"),
        ("Dmitri", "he"),
        ("Elena", "she"),
        ("Farid", "he"),
        ("Grace", "she"),
        ("Hiro", "he"),
        ("Ingrid", "she"),
        ("Jamal", "he"),
        ("Keiko", "she"),
        ("Liam", "he"),
        ("Maya", "she"),
        ("Nikolai", "he"),
        ("Olivia", "she"),
        ("Pedro", "he"),
        ("Quinn", "she"),
        ("Rashid", "he"),
        ("Sofia", "she"),
        ("Tomas", "he"),
    ),
    "validation": (
        ("Uma", "she"),
        ("Victor", "he"),
        ("Wanda", "she"),
        ("Xavier", "he"),
        ("Yara", "she"),
        ("Zane", "he"),
        ("Abena", "she"),
        ("Bruno", "he"),
        ("Chloe", "she"),
        ("Diego", "he"),
        ("Esther", "she"),
        ("Felix", "he"),
        ("Gemma", "she"),
        ("Hamid", "he"),
        ("Isla", "she"),
        ("Jonas", "he"),
        ("Kira", "she"),
        ("Leon", "he"),
        ("Mira", "she"),
        ("Nate", "he"),
    ),
    "test": (
        ("Odette", "she"),
        ("Pavel", "he"),
        ("Rosa", "she"),
        ("Samir", "he"),
        ("Tessa", "she"),
        ("Umar", "he"),
        ("Vera", "she"),
        ("Wes", "he"),
        ("Ximena", "she"),
        ("Yusuf", "he"),
        ("Zoe", "she"),
        ("Arjun", "he"),
        ("Beatriz", "she"),
        ("Caleb", "he"),
        ("Dalia", "she"),
        ("Emil", "he"),
        ("Fatima", "she"),
        ("Gus", "he"),
        ("Hana", "she"),
        ("Ivan", "he"),
    ),
}
_POSSESSIVE = {"she": "her", "he": "his"}
_OBJECT = {"she": "her", "he": "him"}
_REFLEXIVE = {"she": "herself", "he": "himself"}


def _pick(rng: np.random.Generator, seq: Any) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _name(rng: np.random.Generator, split: str) -> str:
    return _pick(rng, _ONSETS[split]) + _pick(rng, _MIDS) + _pick(rng, _ENDS)


def _words(text: str) -> int:
    return len(text.split())


# ---------------------------------------------------------------------------------------------
# multiple choice: subjects


@dataclass(frozen=True)
class _Subject:
    field: str
    actors: tuple[str, ...]
    things: tuple[str, ...]  # each contains {P}
    terms: tuple[tuple[str, str], ...]  # (term, definition as a noun phrase)
    measure: tuple[str, str, str, str] | None = None  # quantity, unit, rise cause, fall cause


# One block per subject: actors, things (each with {P}), optional measure (quantity | unit | rise
# cause | fall cause), then "term = definition" lines; indented lines continue the previous one.
_SUBJECT_SPEC = """
# biology
actors = A biology student | A field ecologist | A laboratory technician
things = the {P} cell line | a population of {P} finches | the {P} wetland ecosystem | a strain of {P}
    yeast
measure = the population size | individuals | a new food source becomes available | a drought reduces
    the food supply
osmosis = the movement of water across a semipermeable membrane toward higher solute concentration
mitosis = the division of a nucleus that yields two genetically identical daughter nuclei
transcription = the synthesis of an RNA molecule from a DNA template
natural selection = the differential survival and reproduction of individuals with heritable traits
    suited to their environment
homeostasis = the maintenance of a stable internal environment despite external changes
symbiosis = a close, long-term interaction between two different species living together
apoptosis = a programmed sequence of events that leads to the death of a cell
photosynthesis = the conversion of light energy into chemical energy stored in sugars
genetic drift = a random change in allele frequencies that is strongest in small populations
# chemistry
actors = A chemistry student | An analytical chemist | A quality-control technician
things = the {P} mineral spring | a sample of {P} salt | the {P} reaction vessel | a batch of {P}
    solvent
measure = the reaction yield | grams | the temperature is raised | a competing side reaction begins
oxidation = the loss of electrons by an atom, ion or molecule
catalysis = the acceleration of a reaction by a substance that is not consumed by it
sublimation = the direct transition of a substance from the solid phase to the gas phase
electronegativity = the tendency of an atom in a bond to attract shared electrons toward itself
isomerism = the existence of compounds with the same molecular formula but different structures
buffering = the resistance of a solution to changes in pH when small amounts of acid or base are added
activation energy = the minimum energy that colliding particles must have for a reaction to occur
chemical equilibrium = a state in which the forward and reverse reaction rates are equal
precipitation = the formation of an insoluble solid when two solutions are mixed
# physics
actors = A physics student | A mechanical engineer | A laboratory instructor
things = the {P} pendulum | a cart on the {P} test track | the {P} optics bench | the {P} cooling tower
measure = the measured force | newtons | the load is increased | the surfaces are lubricated
inertia = the resistance of an object to any change in its state of motion
refraction = the bending of a wave as it passes from one medium into another
resonance = the large increase in amplitude when a system is driven at its natural frequency
conduction = the transfer of thermal energy through direct contact between particles
momentum = the product of an object's mass and its velocity
electromagnetic induction = the generation of a voltage in a conductor by a changing magnetic field
diffraction = the spreading of a wave as it passes through a narrow opening
friction = a force that opposes the relative sliding of two surfaces in contact
# economics
actors = An economics student | A policy analyst | A market researcher
things = the {P} regional market | the economy of {P} province | a {P} farming cooperative | the {P}
    currency union
measure = the monthly output | tonnes | a new subsidy is introduced | import costs rise sharply
opportunity cost = the value of the next best alternative given up when a choice is made
inflation = a sustained rise in the general price level of goods and services
comparative advantage = the ability to produce a good at a lower opportunity cost than another producer
price elasticity of demand = the responsiveness of the quantity demanded to a change in price
monopoly = a market in which a single firm sells a product that has no close substitutes
an externality = a cost or benefit of an activity that falls on people who are not party to it
diminishing marginal utility = the decline in extra satisfaction from each additional unit consumed
fiscal policy = the use of government spending and taxation to influence the economy
# psychology
actors = A psychology student | A clinical researcher | A school counselor
things = participants at the {P} learning center | a classroom at {P} Academy | the {P} longitudinal
    study | volunteers in the {P} sleep clinic
classical conditioning = learning in which a neutral stimulus comes to trigger a response after being
    paired with another stimulus
cognitive dissonance = the discomfort felt when holding two conflicting beliefs or attitudes
confirmation bias = the tendency to seek out information that supports what one already believes
habituation = a decrease in response to a stimulus after repeated exposure to it
the bystander effect = the reduced likelihood of helping a victim when other people are present
working memory = the limited system that holds and manipulates information for short periods
social facilitation = improved performance on simple tasks in the presence of others
reinforcement = any consequence that increases the likelihood that a behaviour will be repeated
# history
actors = A history student | An archivist | A museum curator
things = the {P} trading league | the kingdom of {P} | records in the {P} archives | the port city of
    {P}
mercantilism = an economic doctrine that sought national wealth through a favourable balance of trade
feudalism = a social order in which land was granted in exchange for military service and loyalty
colonialism = the policy of acquiring control over another territory and exploiting it economically
industrialization = the shift from hand production to machine-based manufacturing
nationalism = the belief that a people sharing a culture should govern themselves in their own state
urbanization = the growth in the share of a population living in towns and cities
the Enlightenment = an intellectual movement that emphasised reason, science and individual rights
the Reformation = a sixteenth-century religious movement that challenged the authority of the Roman
    Catholic Church
# law
actors = A law student | A paralegal | A trial judge
things = a dispute in the {P} county court | the {P} shipping contract | a tenant of the {P} building |
    the {P} Water Company
precedent = a prior court decision that guides the resolution of later cases with similar facts
negligence = a failure to exercise the care that a reasonable person would exercise
consideration = something of value exchanged by the parties that makes a contract binding
hearsay = an out-of-court statement offered to prove the truth of the matter asserted
due process = the requirement that the state follow fair legal procedures before depriving a person of
    liberty or property
strict liability = responsibility for harm regardless of fault or intent
estoppel = a rule that prevents a party from asserting something contrary to its earlier conduct
jurisdiction = the authority of a court to hear and decide a case
# medicine
actors = A medical student | An attending physician | A nurse practitioner
things = patients at the {P} district clinic | the {P} cohort study | a ward of {P} General Hospital | a
    trial of the drug {P}mab
measure = the daily dose | milligrams | the patient's weight increases | kidney function declines
tachycardia = a resting heart rate that is faster than normal
anemia = a reduced ability of the blood to carry oxygen because of too few red cells or too little
    hemoglobin
inflammation = the local response of tissue to injury, with redness, heat, swelling and pain
hypoglycemia = an abnormally low concentration of glucose in the blood
edema = swelling caused by excess fluid trapped in the body's tissues
immunization = the induction of protective immunity by exposure to an antigen
ischemia = an inadequate blood supply to an organ or tissue
antibiotic resistance = the ability of bacteria to survive drugs that once killed them
# computer science
actors = A computer science student | A software engineer | A systems administrator
things = the {P} web service | a {P} database cluster | the {P} compiler project | the controller of the
    {P} robot
measure = the request throughput | requests per second | a cache layer is added | verbose logging is
    enabled
recursion = a technique in which a function solves a problem by calling itself on smaller instances
caching = keeping copies of frequently used data in faster storage to reduce access time
deadlock = a situation in which processes wait forever for resources held by each other
hashing = mapping data of arbitrary size to fixed-size values for fast lookup
encryption = the transformation of data so that only authorized parties can read it
garbage collection = the automatic reclamation of memory that a program no longer uses
pipelining = overlapping the execution stages of successive instructions
database normalization = organizing a relational database to reduce redundancy
# earth science
actors = A geology student | A hydrologist | A climate scientist
things = the {P} river delta | the {P} mountain range | a core sample from the {P} basin | the {P}
    coastal plain
measure = the annual sediment load | tonnes | heavy seasonal rains begin | a dam is completed upstream
erosion = the removal and transport of soil and rock by water, wind or ice
subduction = the sinking of one tectonic plate beneath another at a convergent boundary
the greenhouse effect = the warming of a planet's surface by gases that absorb outgoing infrared
    radiation
weathering = the breakdown of rocks in place by physical, chemical or biological processes
a rain shadow = a dry region on the leeward side of a mountain range
convection = the transfer of heat by the circulation of a fluid
an aquifer = an underground layer of rock or sediment that holds and transmits groundwater
sedimentation = the settling of particles out of a fluid to form layers
# philosophy
actors = A philosophy student | A lecturer in ethics | A member of an ethics committee
things = a seminar at the {P} Institute | the {P} dialogues | a debate at {P} College | the writings of
    the philosopher {P}
utilitarianism = the view that the right action is the one that produces the greatest overall well-being
empiricism = the view that knowledge comes primarily from sensory experience
determinism = the view that every event is necessitated by prior causes
deontology = the view that actions are right or wrong according to duties, regardless of outcomes
skepticism = the view that certain knowledge is impossible or should at least be doubted
dualism = the view that mind and body are distinct kinds of substance
relativism = the view that truth or morality depends on culture or perspective
virtue ethics = the view that morality centers on developing good character traits
"""


def _parse_subjects(spec: str) -> tuple[_Subject, ...]:
    blocks: list[tuple[str, list[tuple[str, str]]]] = []
    for raw in spec.strip().splitlines():
        if raw.startswith("# "):
            blocks.append((raw[2:].strip(), []))
        elif raw.startswith("    "):
            key, val = blocks[-1][1][-1]
            blocks[-1][1][-1] = (key, f"{val} {raw.strip()}")
        elif raw.strip():
            key, val = raw.split(" = ", 1)
            blocks[-1][1].append((key.strip(), val.strip()))
    out = []
    for field, entries in blocks:
        d = dict(entries)
        measure = tuple(x.strip() for x in d["measure"].split("|")) if "measure" in d else None
        out.append(
            _Subject(
                field=field,
                actors=tuple(x.strip() for x in d["actors"].split("|")),
                things=tuple(x.strip() for x in d["things"].split("|")),
                terms=tuple((k, v) for k, v in entries if k not in ("actors", "things", "measure")),
                measure=measure,  # type: ignore[arg-type]
            )
        )
    return tuple(out)


_SUBJECTS: tuple[_Subject, ...] = _parse_subjects(_SUBJECT_SPEC)

_MC_FILLERS = (
    "The work was carried out over several months at a field station near {P2}.",
    "Earlier reports had described {thing2} in similar terms, although the evidence was limited.",
    "Several colleagues initially argued that the pattern could be explained by measurement error alone.",
    "No other variables were deliberately changed during this period.",
    "The findings were later summarised for a regional conference on {field}.",
    "A second reviewer checked the records and found no errors in the recorded values.",
    "Assume that all other conditions remain constant unless stated otherwise.",
    "The observation was repeated on several occasions with consistent results.",
    "The notes also mention that the relevant background material had been covered earlier in the course.",
    "Funding for the project came from a small grant awarded by the {P2} Foundation.",
    "Some details of the original setup have been simplified for the purpose of this question.",
    "Students were asked to justify their choice with reference to standard textbook terminology.",
)

_STEPS = (
    "Review the existing literature on the topic",
    "Formulate a testable hypothesis",
    "Design the sampling and measurement procedure",
    "Collect the measurements",
    "Analyze the data statistically",
    "Report the findings and their limitations",
)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _thing(rng: np.random.Generator, subj: _Subject, split: str) -> str:
    return _pick(rng, subj.things).format(P=_name(rng, split))


def _pad(rng: np.random.Generator, lead: str, tail: str, fillers: list[str], lo: int, hi: int) -> str:
    """Insert context sentences after the lead's first sentence until a word count drawn in [lo, hi].

    Real exam items vary in length and carry context that is not needed for the answer; this gives
    the token counter and the embedder realistic, varied strings.
    """
    target = int(rng.integers(lo + 5, hi - 10))
    cut = lead.find(". ")
    head, body = (lead[: cut + 1], lead[cut + 2 :]) if cut >= 0 else (lead, "")
    order = [fillers[int(i)] for i in rng.permutation(len(fillers))]
    added: list[str] = []

    def join(extra: list[str]) -> str:
        return " ".join(p for p in (head, *extra, body, tail) if p)

    for f in order:
        if _words(join(added)) >= target:
            break
        if _words(join([*added, f])) > hi:
            continue
        added.append(f)
    return join(added)


def _mc_item(rng: np.random.Generator, split: str) -> tuple[str, list[str], int, dict[str, Any]]:
    subj: _Subject = _pick(rng, _SUBJECTS)
    actor = _pick(rng, subj.actors)
    thing = _thing(rng, subj, split)
    fill_ctx = {"P2": _name(rng, split), "thing2": _thing(rng, subj, split), "field": subj.field}
    fillers = [f.format(**fill_ctx) for f in _MC_FILLERS]
    templates = ["definition", "case", "statement", "except", "method"]
    if subj.measure is not None:
        templates += ["quantity", "quantity"]
    kind = _pick(rng, templates)
    idx = [int(i) for i in rng.permutation(len(subj.terms))[:4]]
    gold_pos = int(rng.integers(4))
    terms = [subj.terms[i] for i in idx]
    target_term, target_def = terms[gold_pos]

    if kind == "definition":
        lead = f"{actor} preparing a lecture on {subj.field} wants to use {thing} as a running example."
        tail = f"In this context, which term refers to {target_def}?"
        options = [_cap(t) for t, _ in terms]
    elif kind == "case":
        lead = (
            f"{actor} reviewing {thing} finds what appears to be a clear instance of {target_def}. "
            f"The case is written up for a discussion group."
        )
        tail = f"Which term from {subj.field} best names what was found?"
        options = [_cap(t) for t, _ in terms]
    elif kind == "statement":
        lead = (
            f"{actor} is writing study notes for a unit on {subj.field} that uses {thing} as an example, "
            f"and wants to make sure the glossary entry for {target_term} is accurate."
        )
        tail = f"Which of the following statements about {target_term} is correct?"
        options = [f"It refers to {d}." for _, d in terms]
    elif kind == "except":
        other = _pick(rng, [s for s in _SUBJECTS if s.field != subj.field])
        foreign = other.terms[int(rng.integers(len(other.terms)))][0]
        own = [t for t, _ in terms[:3]]
        options = [_cap(t) for t in own]
        options.insert(gold_pos, _cap(foreign))
        lead = (
            f"{actor} compiling a glossary for a course module built around {thing} lists several terms "
            f"that students should know."
        )
        tail = f"All of the following are standard terms in {subj.field} EXCEPT:"
    elif kind == "method":
        picked = sorted(int(i) for i in rng.permutation(len(_STEPS))[:4])
        first = bool(rng.integers(2))
        gold_step = picked[0] if first else picked[-1]
        others = [s for s in picked if s != gold_step]
        others = [others[int(i)] for i in rng.permutation(len(others))]
        order = others[:gold_pos] + [gold_step] + others[gold_pos:]
        options = [_STEPS[s] + "." for s in order]
        lead = f"{actor} is planning a systematic study of {thing} and drafts a list of tasks for the team."
        which = "first" if first else "last"
        tail = f"Following the usual order of scientific inquiry, which of these tasks should come {which}?"
    else:  # quantity
        quantity, unit, rise, fall = subj.measure  # type: ignore[misc]
        base = int(rng.integers(3, 40)) * 20
        pct = int(_pick(rng, (10, 20, 25, 40, 50, 75)))
        up = bool(rng.integers(2))
        delta = base * pct // 100
        gold = base + delta if up else base - delta
        wrong = [
            delta,
            base - delta if up else base + delta,
            base + pct if up else base - pct,
            gold + 2 * delta,
            gold - delta // 2 + 1,
        ]
        wrong = [w for w in dict.fromkeys(wrong) if w != gold and w > 0][:3]
        k = 1
        while len(wrong) < 3:
            cand = gold + 10 * k
            if cand not in wrong:
                wrong.append(cand)
            k += 1
        values = wrong[:gold_pos] + [gold] + wrong[gold_pos:]
        options = [f"{v} {unit}" for v in values]
        verb = "increases" if up else "decreases"
        lead = (
            f"{actor} records {quantity} of {thing} as {base} {unit} under baseline conditions. "
            f"After {rise if up else fall}, the value {verb} by {pct} percent."
        )
        tail = f"What is the new value of {quantity}?"
    text = _pad(rng, lead, tail, fillers, *MC_WORDS)
    meta = {"subject": subj.field, "template": kind}
    return text, options, gold_pos, meta


def generate_mc(seed: int, split: str, index: int) -> Question:
    """Multiple-choice question ``index`` of ``split``; a pure function of its arguments."""
    rng = np.random.default_rng(stable_seed("synthetic", "mc", seed, split, index))
    text, options, gold, meta = _mc_item(rng, split)
    return Question(
        id=f"synthetic-mc-{split}-{index:05d}",
        text=text,
        options=tuple(options),
        answer=LETTERS[gold],
        benchmark="synthetic",
        kind="mc",
        meta={**meta, "profile": "mmlu", "split": split},
    )


# ---------------------------------------------------------------------------------------------
# numeric (GSM8K-like)

_NUM_FILLERS = (
    "{N} likes to keep careful track of everything in a small notebook.",
    "It is a busy week, so {pron} wants to plan ahead.",
    "{N} checks the figures twice before making a decision.",
    "Nothing else changes during this time.",
    "{Pron} has been looking forward to this for a while.",
    "A friend offers to help, but {N} prefers to work it out alone.",
    "{N} writes the plan on a sheet of paper and pins it to the wall.",
    "The weather stays pleasant throughout.",
    "{N} wants to be sure there are no surprises at the end.",
    "Everyone involved agrees that the plan is reasonable.",
)

_Problem = tuple[str, int]


def _p_shopping(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    a, pa = int(r.integers(2, 9)), int(r.integers(2, 15))
    b, pb = int(r.integers(2, 7)), int(r.integers(3, 25))
    item_a, item_b = _pick(
        r,
        (
            ("notebooks", "pens"),
            ("apples", "melons"),
            ("candles", "vases"),
            ("socks", "scarves"),
            ("paint tubes", "brushes"),
        ),
    )
    total = a * pa + b * pb
    bill = ((total // 50) + 1) * 50
    text = (
        f"{n} goes to the {place} market to buy supplies. {_cap(pr)} buys {a} {item_a} that cost "
        f"${pa} each and {b} {item_b} that cost ${pb} each. {_cap(pr)} pays with ${bill} in bills. "
        f"How much change, in dollars, should {n} receive?"
    )
    return text, bill - total


def _p_wage(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    h, d, w = int(r.integers(3, 9)), int(r.integers(3, 7)), int(r.integers(9, 31))
    bonus = int(r.integers(2, 9)) * 10
    spend = int(r.integers(1, 5)) * 25
    text = (
        f"{n} works part-time at a bakery in {place}. {_cap(pr)} works {h} hours a day for {d} days "
        f"this week and earns ${w} per hour. At the end of the week {pr} also gets a bonus of ${bonus}. "
        f"{_cap(pr)} then spends ${spend} on a gift for a friend. How many dollars does {n} have left "
        f"from this week's earnings?"
    )
    return text, h * d * w + bonus - spend


def _p_baking(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    per, batches = int(r.integers(8, 25)), int(r.integers(3, 8))
    friends, each = int(r.integers(2, 6)), int(r.integers(2, 7))
    eat = int(r.integers(1, 6))
    total = per * batches
    if friends * each + eat >= total:
        batches += (friends * each + eat) // per + 1
        total = per * batches
    text = (
        f"{n} is baking cookies for the {place} school fair. Each batch makes {per} cookies, and "
        f"{pr} bakes {batches} batches. {_cap(pr)} gives {each} cookies to each of {friends} friends "
        f"who helped set up the stall, and eats {eat} cookies {_REFLEXIVE[pr]}. How many cookies are "
        f"left to sell at the fair?"
    )
    return text, total - friends * each - eat


def _p_distance(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    v1, t1 = int(r.integers(4, 13)) * 5, int(r.integers(1, 5))
    v2, t2 = int(r.integers(4, 13)) * 5, int(r.integers(1, 4))
    done = v1 * t1 + v2 * t2
    trip = done + int(r.integers(1, 20)) * 5
    text = (
        f"{n} is driving to {place}, which is {trip} miles away. {_cap(pr)} drives at {v1} miles per "
        f"hour for {t1} hours, stops for lunch, and then drives at {v2} miles per hour for another "
        f"{t2} hours. How many miles does {n} still have to drive to reach {place}?"
    )
    return text, trip - done


def _p_savings(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    start, per, weeks = int(r.integers(0, 20)) * 5, int(r.integers(3, 21)), int(r.integers(4, 16))
    price = int(r.integers(2, 12)) * 10
    have = start + per * weeks
    if price >= have:
        price = max(10, (have - 1) // 10 * 10)
    text = (
        f"{n} wants to buy a new bicycle helmet from a shop in {place}. {_cap(pr)} already has ${start} "
        f"saved and puts away ${per} every week for {weeks} weeks. The helmet costs ${price}. After "
        f"buying the helmet, how many dollars does {n} have left?"
    )
    return text, have - price


def _p_garden(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    rows, per = int(r.integers(3, 13)), int(r.integers(4, 16))
    k = int(_pick(r, (2, 3, 4, 5)))
    total = rows * per
    total -= total % k
    rows_text = f"{total} seedlings"
    frac = {2: "half", 3: "a third", 4: "a quarter", 5: "a fifth"}[k]
    extra = int(r.integers(2, 20))
    text = (
        f"{n} runs a community garden in {place}. In spring {pr} plants {rows_text} in neat rows. "
        f"A late frost kills {frac} of them. Later, {pr} plants {extra} more seedlings that a neighbour "
        f"gave {_OBJECT[pr]}. How many seedlings are growing in the garden now?"
    )
    return text, total - total // k + extra


def _p_groups(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    g = int(r.integers(3, 7))
    groups = int(r.integers(4, 11))
    students = g * groups
    m = int(r.integers(2, 6))
    pack = int(_pick(r, (6, 8, 10, 12)))
    need = groups * m
    packs = -(-need // pack)
    text = (
        f"{n} teaches a class of {students} students at {place} Elementary. For a project, {pr} splits "
        f"the class into groups of {g}. Each group needs {m} markers, and markers are sold only in "
        f"packs of {pack}. What is the smallest number of packs {n} must buy?"
    )
    return text, packs


def _p_ages(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    c = int(r.integers(3, 12))
    mult = int(r.integers(2, 4))
    diff = int(r.integers(2, 9))
    years = int(r.integers(2, 11))
    b = c * mult
    a = b + diff
    text = (
        f"{n} lives in {place} with two younger cousins. {n} is {diff} years older than the middle "
        f"cousin, and the middle cousin is {mult} times as old as the youngest cousin, who is {c} years "
        f"old. What will be the sum of the three ages in {years} years?"
    )
    return text, a + b + c + 3 * years


def _p_discount(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    price = int(r.integers(2, 16)) * 20
    pct = int(_pick(r, (10, 20, 25, 50)))
    q = int(r.integers(2, 6))
    ship = int(r.integers(0, 4)) * 5
    unit = price - price * pct // 100
    text = (
        f"A store in {place} sells jackets for ${price} each. This weekend every jacket is {pct}% off. "
        f"{n} buys {q} jackets for {_POSSESSIVE[pr]} family and pays a flat delivery fee of ${ship}. "
        f"How much does {n} pay in total, in dollars?"
    )
    return text, unit * q + ship


def _p_reading(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    rate, d1 = int(r.integers(5, 21)), int(r.integers(2, 7))
    rate2 = rate * 2
    days2 = int(r.integers(1, 6))
    pages = rate * d1 + rate2 * days2
    text = (
        f"{n} borrows a novel from the {place} library. For the first {d1} days {pr} reads {rate} pages "
        f"a day. After that {pr} doubles {_POSSESSIVE[pr]} pace and finishes the book in exactly "
        f"{days2} more days. How many pages does the book have?"
    )
    return text, pages


def _p_tank(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    fill, leak = int(r.integers(6, 20)), int(r.integers(1, 5))
    net = fill - leak
    minutes = int(r.integers(5, 30))
    cap = net * minutes
    text = (
        f"{n} is filling a water tank on a farm near {place}. The tank holds {cap} liters. Water flows "
        f"in at {fill} liters per minute, but a crack lets {leak} liters per minute leak out. Starting "
        f"from empty, how many minutes does it take to fill the tank?"
    )
    return text, minutes


def _p_animals(r: np.random.Generator, n: str, pr: str, place: str) -> _Problem:
    chickens, cows = int(r.integers(5, 30)), int(r.integers(2, 15))
    sold = int(r.integers(1, chickens))
    text = (
        f"{n} keeps chickens and cows on a small farm outside {place}. There are {chickens} chickens and "
        f"{cows} cows. At the weekly market {pr} sells {sold} of the chickens. How many legs do the "
        f"animals that remain on the farm have altogether?"
    )
    return text, (chickens - sold) * 2 + cows * 4


_NUMERIC_TEMPLATES: tuple[Callable[[np.random.Generator, str, str, str], _Problem], ...] = (
    _p_shopping,
    _p_wage,
    _p_baking,
    _p_distance,
    _p_savings,
    _p_garden,
    _p_groups,
    _p_ages,
    _p_discount,
    _p_reading,
    _p_tank,
    _p_animals,
)


def generate_numeric(seed: int, split: str, index: int) -> Question:
    """GSM8K-like word problem ``index`` of ``split``; a pure function of its arguments."""
    rng = np.random.default_rng(stable_seed("synthetic", "numeric", seed, split, index))
    name, pron = _pick(rng, _FIRST_NAMES[split])
    place = _name(rng, split)
    ti = int(rng.integers(len(_NUMERIC_TEMPLATES)))
    core, answer = _NUMERIC_TEMPLATES[ti](rng, name, pron, place)
    fill = [f.format(N=name, pron=pron, Pron=_cap(pron)) for f in _NUM_FILLERS]
    q_start = core.rfind(". ") + 2  # every template ends with its question sentence
    lead, tail = core[:q_start].strip(), core[q_start:]
    text = _pad(rng, lead, tail, fill, *NUMERIC_WORDS)
    return Question(
        id=f"synthetic-numeric-{split}-{index:05d}",
        text=text,
        options=None,
        answer=str(int(answer)),
        benchmark="synthetic",
        kind="numeric",
        meta={"template": _NUMERIC_TEMPLATES[ti].__name__[3:], "profile": "gsm8k", "split": split},
    )


# ---------------------------------------------------------------------------------------------
# adapter


@dataclass
class SyntheticSettings(BenchmarkSettings):
    name: str = "synthetic"
    variant: str | None = "mc"  # mc | numeric
    path: str | None = None  # generated: no files
    source: str = "generated"


@dataclass
class SyntheticNumericSettings(SyntheticSettings):
    name: str = "synthetic_numeric"
    profile: str = "gsm8k"
    variant: str | None = "numeric"


class SyntheticBenchmark(BenchmarkAdapter):
    """Generated questions; ``variant`` mc (profile mmlu) or numeric (profile gsm8k).

    ``size=None`` gives the default split size (train 1000, validation 200, test 500); any
    larger size is allowed. ``seed`` is the generation seed.
    """

    Settings = SyntheticSettings

    def __init__(self, **cfg: Any) -> None:
        variant = cfg.get("variant") or self.Settings.variant
        if variant not in ("mc", "numeric"):
            raise ValueError(f"benchmark 'synthetic': variant must be mc or numeric, got '{variant}'")
        cfg["variant"] = variant
        if cfg.get("profile") is None:
            cfg["profile"] = "mmlu" if variant == "mc" else "gsm8k"
        super().__init__(**cfg)
        self.kind: QuestionKind = "mc" if variant == "mc" else "numeric"
        self.source = "generated" if self.source == "local" else self.source

    def load(self, split: str, size: int | None = None, seed: int = 0) -> list[Question]:
        logical = {"train": self.train_split, "test": self.test_split}.get(split, split)
        if logical not in SPLITS:
            raise ValueError(f"benchmark 'synthetic': unknown split '{split}'; valid: {', '.join(SPLITS)}")
        n = DEFAULT_SIZES[logical] if size is None else int(size)
        if n < 0:
            raise ValueError(f"benchmark 'synthetic': size must be >= 0, got {n}")
        gen = generate_mc if self.kind == "mc" else generate_numeric
        # the test questions are the same for every run seed (a fixed test set); training
        # questions follow the seed
        qseed = 0 if logical == "test" else int(seed)
        return [gen(qseed, logical, i) for i in range(n)]


class SyntheticNumericBenchmark(SyntheticBenchmark):
    """`benchmark=synthetic_numeric`: the numeric variant under its own name, so run dirs and
    results say which synthetic set was used."""

    Settings = SyntheticNumericSettings
