"""`tomacs transcripts texts`: read both sides, pick the embedder the runs used, compare, print.

Kept apart from `tomacs.analysis.texts` (the statistics) so that tests drive the numbers without
a console, and the CLI stays a parser of options.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tomacs.transcripts.schema import Debate

DEFAULT_CACHE = "outputs/cache/embeddings.sqlite"


def run_embedder(sim_paths: Sequence[str]) -> str | None:
    """The embedder of the first sim run found under `sim_paths` (its config.yaml), so the texts are
    compared in the space the runs' policies read them in; None when no run says."""
    from tomacs.embedding.embedders import DEFAULT_EMBEDDER
    from tomacs.job.files import read_run_config

    for p in sim_paths:
        path = Path(p)
        top = path / "config.yaml"
        found = top if top.is_file() else min(path.rglob("config.yaml"), default=None)
        if found is not None:
            cfg = read_run_config(found.parent) or {}
            return str(cfg.get("embedder") or DEFAULT_EMBEDDER)
    return None


def load_side(paths: Sequence[str]) -> list[Debate]:
    from tomacs.sim.from_episodes import expand_paths
    from tomacs.transcripts import load_debates

    return list(load_debates(expand_paths(paths)))


def embedding_function(name: str) -> Callable[[list[str]], np.ndarray]:
    """A batched embed function with a progress bar (MiniLM on 2 cores: minutes for a few thousand
    replies, through the shared persistent cache, so a second look is fast)."""
    from rich.progress import Progress

    from tomacs.embedding.embedders import configure, get_embedder

    if name == "minilm":
        configure(cache=DEFAULT_CACHE)
    emb = get_embedder(name)

    def embed(texts: list[str]) -> np.ndarray:
        out = []
        with Progress(transient=True) as bar:
            task = bar.add_task(f"embedding {len(texts)} replies ({name})", total=len(texts))
            for i in range(0, len(texts), 256):
                out.append(np.asarray(emb.embed(texts[i : i + 256]), dtype=np.float32))
                bar.advance(task, min(256, len(texts) - i))
        return np.vstack(out) if out else np.zeros((0, 1), dtype=np.float32)

    return embed


def _f(x: float | None, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _ci(res: dict[str, Any], name: str) -> str:
    """An AUC with its question-bootstrap 95 % interval, when the result has one."""
    ci = res.get(f"{name}_auc_ci")
    text = _f(res.get(f"{name}_auc"))
    return f"{text}  [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else text


def _matched_line(res: dict[str, Any]) -> list[str]:
    """The simulated adversary AUC at the real side's size, where the simulated side is larger."""
    if res.get("sim_adversary_auc_matched") is None:
        return []
    lo, hi = res["sim_adversary_auc_matched_range"]
    return [
        f"  adversary vs honest, simulated, at the real side's size    {_f(res['sim_adversary_auc_matched'])}"
        f"  [{lo:.3f}, {hi:.3f}]   (mean, range: {res['matched_draws']} draws of whole debates of whole "
        f"questions, {res['matched_replies']} acting replies each; compare this one with the real AUC)"
    ]


def _gap_line(res: dict[str, Any]) -> list[str]:
    """The adversary AUC's gap, simulated minus real, with its interval and where it stands against issue
    38's target; absent from a JSON written before the gap was kept."""
    if res.get("adversary_gap") is None:
        return []
    from tomacs.analysis.texts import GAP_TARGET

    ci = res.get("adversary_gap_ci")
    span = f"  [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""
    which = "at the real side's size" if res.get("sim_adversary_auc_matched") is not None else "all"
    label = f"  gap, simulated ({which}) minus real"
    return [
        f"{label:<61}{res['adversary_gap']:+.3f}{span}"
        f"   (target within +-{GAP_TARGET:.2f}: {res['adversary_gap_verdict']})"
    ]


def _sets_lines(res: dict[str, Any]) -> list[str]:
    """The real AUC to expect at the held-out size (`tomacs.analysis.texts.real_sets`), and the gap to it."""
    if res.get("real_sets_auc") is None:
        return []
    lo, hi = res["real_sets_auc_range"]
    label = f"  adversary vs honest, real, sets of {res['real_sets_questions']} of all its questions"
    out = [
        f"{label:<61}{_f(res['real_sets_auc'])}  sd {res['real_sets_auc_sd']:.3f}  [{lo:.3f}, {hi:.3f}]   "
        f"(mean, sd, 2.5-97.5 %: {res['real_sets_draws']} draws of fitting and held-out questions, the probe "
        "refitted on each: the real AUC to expect at the held-out size)"
    ]
    if res.get("adversary_gap_sets") is not None:
        out.append(f"{'  gap, simulated minus that':<61}{res['adversary_gap_sets']:+.3f}")
    return out


def _on_target_line(res: dict[str, Any]) -> list[str]:
    """The role cue beyond the answer argued for: adversary vs honest among replies on the target."""
    t = res.get("on_target")
    if not t or (t["sim_auc"] is None and t["real_auc"] is None):
        return []
    matched = "" if t["sim_auc_matched"] is None else f" (at the real size {_f(t['sim_auc_matched'])})"
    return [
        f"  adversary vs honest, replies on the target only: sim {_f(t['sim_auc'])}{matched}, "
        f"real {_f(t['real_auc'])}   ({t['sim_honest']} / {t['real_honest']} honest replies on it; "
        "the role cue beyond the answer argued for)"
    ]


def _words_line(res: dict[str, Any]) -> list[str]:
    if res.get("transfer_words_auc") is None:  # a result written before the line existed, or too few
        return []
    return [
        f"  the same on words alone (bag of words, no embedder)        {_ci(res, 'transfer_words')}"
        "   (high here, low above: the embedder, not the texts)"
    ]


def _alike_lines(res: dict[str, Any]) -> list[str]:
    """The replies of one debate, how alike (`tomacs.analysis.texts.alike`); absent from an older JSON."""
    al = res.get("alike")
    if not al:
        return []
    lines = [
        "",
        "alike within a debate (mean cosine of two replies of one debate and round; gap = honest pair minus",
        "adversary and honest: how far the adversary stands apart; length: how much two honest replies'",
        "lengths go together, the share of variance they share)",
        f"  {'round':<8}{'sim honest':>11}{'sim adv':>9}{'sim gap':>9}{'real honest':>13}{'real adv':>10}"
        f"{'real gap':>10}{'sim length':>12}{'real length':>13}",
    ]
    real = {row["round"]: row for row in al["real"]}
    for row in al["sim"]:
        other = real.get(row["round"], {})
        cells = []
        for r in (row, other):
            h, a = r.get("honest_pair"), r.get("adversary_honest")
            cells.append((h, a, h - a if h is not None and a is not None else None))
        (sh, sa, sg), (rh, ra, rg) = cells
        lines.append(
            f"  {row['round']:<8}{_f(sh):>11}{_f(sa):>9}{_f(sg):>9}{_f(rh):>13}{_f(ra):>10}{_f(rg):>10}"
            f"{_f(row.get('length_shared'), 2):>12}{_f(other.get('length_shared'), 2):>13}"
        )
    later = [
        (row, real.get(row["round"], {})) for row in al["sim"] if row["round"] >= 2 and "honest_own" in row
    ]
    if later:
        lines += [
            "alike to its own agent's reply of the round before (mean cosine; App. C's persistence features",
            "read it)",
            f"  {'round':<8}{'sim honest':>11}{'real honest':>13}{'sim adv':>9}{'real adv':>10}",
        ]
        for row, other in later:
            lines.append(
                f"  {row['round']:<8}{_f(row['honest_own']):>11}{_f(other.get('honest_own')):>13}"
                f"{_f(row['adversary_own']):>9}{_f(other.get('adversary_own')):>10}"
            )
    return lines


def format_comparison(res: dict[str, Any]) -> str:
    """Plain text, one block of AUCs and one table of the style statistics that differ most."""
    r = res["replies"]
    lines = [
        f"texts: sim {res['sim_label']} against real {res['real_label']}; embedder {res['embedder']}; "
        f"{res['folds']} folds by question (seed {res['seed']})",
        f"replies  sim {r['sim']['all']} ({r['sim']['questions']} questions; acting rounds: "
        f"{r['sim']['acting_honest']} honest, {r['sim']['acting_adversary']} adversary)   "
        f"real {r['real']['all']} ({r['real']['questions']} questions; acting rounds: "
        f"{r['real']['acting_honest']} honest, {r['real']['acting_adversary']} adversary); "
        f"{res['shared_questions']} questions on both sides",
        "(in brackets: 95 % intervals over the questions, drawn with replacement)",
        "",
        f"  two-sample AUC, sim vs real (0.5 = cannot be told apart)   {_f(res['two_sample_auc'])}",
        f"  adversary vs honest, real replies (the ceiling)            {_ci(res, 'real_adversary')}",
        f"  adversary vs honest, simulated replies                     {_ci(res, 'sim_adversary')}",
        *_matched_line(res),
        *_gap_line(res),
        f"  probe trained on simulated replies, applied to real ones   {_ci(res, 'transfer')}",
        *_words_line(res),
        f"  length alone, adversary longer: sim {_f(res['sim_length_auc'])}, "
        f"real {_f(res['real_length_auc'])}",
    ]
    lines += _on_target_line(res)
    if res.get("real_fit_adversary_auc") is not None:
        lines.append(
            f"  adversary vs honest, real replies of the fitting questions {_ci(res, 'real_fit_adversary')}"
            "   (the same, more questions)"
        )
    lines += _sets_lines(res)
    if res.get("real_trained_auc") is not None:
        lines.append(
            f"  probe trained on the real fitting questions' replies       {_f(res['real_trained_auc'])}"
            "   (the ceiling with real data)"
        )
    rows = res.get("by_round", [])
    fitting = any("real_fit_adversary_auc" in row for row in rows)  # with --held-out
    head = "by round        transfer   real adv-vs-honest   sim adv-vs-honest"
    lines += ["", head + ("   real, fitting" if fitting else "")]
    for row in rows:
        lines.append(
            f"  round {row['round']:<8}{_f(row['transfer_auc']):>8}{_f(row['real_adversary_auc']):>21}"
            f"{_f(row['sim_adversary_auc']):>20}" + (f"{_f(row.get('real_fit_adversary_auc')):>17}" * fitting)
        )
    lines += _alike_lines(res)
    lines += [
        "",
        "style (acting rounds; d = adversary minus honest in pooled SDs; largest sim/real gap first)",
        f"  {'statistic':<16}{'sim honest':>11}{'sim adv':>10}{'real honest':>12}{'real adv':>10}"
        f"{'d sim':>8}{'d real':>8}",
    ]
    for row in res["style"]:
        nd = 0 if row["stat"] in ("chars", "words") else 2
        lines.append(
            f"  {row['stat']:<16}{_f(row['sim_honest'], nd):>11}{_f(row['sim_adversary'], nd):>10}"
            f"{_f(row['real_honest'], nd):>12}{_f(row['real_adversary'], nd):>10}"
            f"{_f(row['sim_d'], 2):>8}{_f(row['real_d'], 2):>8}"
        )
    return "\n".join(lines)


def run_texts(
    sim_paths: Sequence[str],
    real_paths: Sequence[str],
    model: str | None,
    held_out: bool,
    split: float,
    embedder: str | None,
    max_replies: int | None,
    seed: int,
    out: str | None,
    fold: str | None = None,
) -> str:
    """Both sides read, compared, written to `out` as JSON, and formatted. With `fold` (k/K, which implies
    `held_out`), the real side is that fold of a cross-fit: its other folds are the fitting questions."""
    from tomacs.analysis.texts import compare
    from tomacs.sim.fit_episodes import split_questions
    from tomacs.sim.from_episodes import select_debates
    from tomacs.transcripts import TranscriptError
    from tomacs.transcripts.split import held_out_label, parse_fold

    k_of = parse_fold(fold)
    held_out = held_out or k_of is not None

    try:
        sim = load_side(sim_paths)
        real_all = select_debates(load_side(real_paths), model)
    except TranscriptError as exc:
        raise ValueError(str(exc)) from None
    real_fit: list[Debate] = []
    real = real_all
    if held_out:
        real_fit, real = split_questions(real_all, split, seed, k_of)
    name = embedder or run_embedder(sim_paths) or "minilm"
    res = compare(
        sim, real, embedding_function(name), seed=seed, max_replies=max_replies, real_train=real_fit
    )
    res.update(
        embedder=name,
        sim_label=", ".join(sim_paths),
        real_label=", ".join(real_paths)
        + (f" (model {model})" if model else "")
        + (held_out_label(split, seed, k_of) if held_out else ""),
        sim_models=sorted({d.model or "?" for d in sim}),
        real_models=sorted({d.model or "?" for d in real}),
        model=model,
        held_out=held_out,
        fold=None if k_of is None else str(k_of),
    )
    if out:
        Path(out).write_text(json.dumps(res, indent=2) + "\n")
    return format_comparison(res)
