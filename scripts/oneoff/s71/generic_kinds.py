"""Which sentences of simulated replies the fit calls generic, most frequent first (stop 71).

python scripts/oneoff/s71/generic_kinds.py SIMRUN [ROLE] [ROUND]
"""

import sys
from collections import Counter

from tomacs.analysis.text_report import load_side
from tomacs.sim import text_model as tm


def main() -> None:
    sim = load_side([sys.argv[1]])
    role = sys.argv[2] if len(sys.argv) > 2 else "adversary"
    rnd = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    common = tm.common_stems(sim)
    c: Counter = Counter()
    pos: Counter = Counter()
    words = gen_words = 0
    for d in sim:
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
            for i, s in enumerate(sents):
                g = tm.generic_form(s, vocab, t.answer, common, opts)
                if g:
                    gen_words += len(s.split())
                    c[g] += len(s.split())
                    pos["first" if i == 0 else "last" if i == len(sents) - 1 else "middle"] += len(s.split())
    where = {k: round(v / words, 3) for k, v in pos.items()}
    print(f"generic share {gen_words / words:.3f}; by position", where)
    for g, n in c.most_common(40):
        print(f"{n / words:.4f}  {g}")


if __name__ == "__main__":
    main()
