"""Where a real model's role signal lives: probe on each reply's generic (bank) sentences vs its content sentences."""

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.analysis.texts import cv_auc
from tomacs.sim import text_model as tm
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

emb = embedding_function("minilm")
D = "/work/shared/data/debates"
MAA = D + "/multi-agent-attack/mmlu/adv_100_3_3_1"
for m, src in (
    ("qwen-max", D + "/mad-follower"),
    ("Qwen1.5-14B-Chat", MAA + "-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat"),
):
    deb = select_debates(load_side([src]), m)
    fit, _ = split_questions(deb, 0.7, 0)
    common = tm.common_stems(fit)
    gen_t, con_t, y, g = [], [], [], []
    for d in fit:
        onsets = [a.onset for a in d.agents if a.role == "adversary" and a.onset is not None]
        if not onsets:
            continue
        vocab = tm._vocab(d)
        for t in d.turns:
            if not t.text or t.round < min(onsets):
                continue
            sents = tm.split_sentences(t.text)
            gen = [tm.generic_form(s, vocab, t.answer, common, tuple(d.options or ())) for s in sents]
            gen_t.append(" ".join(s for s, x in zip(sents, gen) if x) or ".")
            con_t.append(" ".join(s for s, x in zip(sents, gen) if not x) or ".")
            y.append(d.is_adversarial(t.agent, t.round))
            g.append(d.question_key)
    y = np.array(y, float)
    gw = np.mean([len(a.split()) / max(1, len(a.split()) + len(b.split())) for a, b in zip(gen_t, con_t)])
    print(
        m,
        "generic word share",
        round(gw, 3),
        "generic-only",
        round(cv_auc(emb(gen_t), y, g), 3),
        "content-only",
        round(cv_auc(emb(con_t), y, g), 3),
        flush=True,
    )
