"""Which part of the generator wrote the words the fit counts generic in simulated replies (stop 72).

python scripts/oneoff/s72/gensource.py SIMRUN ROLE ROUND [REALDIR MODEL]
Sources: the templates' tuples in tomacs.sim.text (matched as patterns), else "bank" (a fitted bank sentence).
"""

import re
import sys
from collections import Counter

from tomacs.analysis.text_report import load_side
from tomacs.sim import text as tx
from tomacs.sim import text_model as tm
from tomacs.sim.from_episodes import select_debates

GROUPS = {
    "topic_mc": tx._TOPIC_MC,
    "reject": tuple("{o} " + r + "." for r in tx._REJECT),
    "support": tuple("{o} " + r + "." for r in tx._SUPPORT),
    "fill_mc": tx._FILL_MC,
    "conclude": tx._CONCLUDE_MC,
    "openers": tx._OPENERS + tx._OPENERS_NO_PERSONA,
    "topical_answer": tx._TOPICAL_ANSWER,
    "topical_plain": tx._TOPICAL_PLAIN,
    "topical_terms": tx._TOPICAL_TERMS,
    "discussion": tx._KEEP_AGREE
    + tx._KEEP_DISAGREE
    + tx._KEEP_ALONE
    + tx._CHANGE_CITE
    + tx._CHANGE_QUOTE
    + tx._CHANGE_PERSUADED
    + tx._CHANGE_ALONE,
}


def pattern(t: str) -> re.Pattern:
    parts = re.split(r"\{[^}]*\}", t)
    return re.compile("^" + "(.+?)".join(re.escape(p) for p in parts) + "$", re.IGNORECASE | re.DOTALL)


PATS = [(g, pattern(t)) for g, ts in GROUPS.items() for t in ts]


def source(s: str) -> str:
    for g, p in PATS:
        if p.match(s.strip()):
            return g
    return "bank/other"


def main() -> None:
    sim_dir, role, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    deb = load_side([sim_dir])
    real = select_debates(load_side([sys.argv[4]]), sys.argv[5]) if len(sys.argv) > 5 else deb
    common = tm.common_stems(real)
    gen: Counter = Counter()
    allw: Counter = Counter()
    last: Counter = Counter()
    words = n = 0
    for d in deb:
        vocab = tm._vocab(d)
        opts = tuple(d.options or ())
        for t in d.turns:
            if t.round != rnd or not t.text:
                continue
            if ("adversary" if d.is_adversarial(t.agent, t.round) else "honest") != role:
                continue
            text = tm._ANSWER_LINE.sub("", t.text)
            sents = tm.split_sentences(text)
            words += len(text.split())
            n += 1
            for i, s in enumerate(sents):
                src = source(s)
                allw[src] += len(s.split())
                if tm.generic_form(s, vocab, t.answer, common, opts):
                    gen[src] += len(s.split())
                    if i == len(sents) - 1:
                        last[src] += 1
    print(f"{n} replies, {words / n:.0f} words; share of words: source all / generic-by-fit")
    for k, v in allw.most_common():
        print(f"  {k:16s} {v / words:.3f} / {gen[k] / words:.3f}")
    print(
        f"  total generic {sum(gen.values()) / words:.3f}; generic last sentence by source:",
        {k: round(v / n, 3) for k, v in last.most_common()},
    )


if __name__ == "__main__":
    main()
