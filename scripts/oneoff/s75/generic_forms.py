"""Issue 38, stop 75: the share of honest round-1 words in sentences the text fit counts as generic
(`generic_form`, common stems of the same side), and the 25 forms that take most words.

Usage: python scripts/oneoff/s75/generic_forms.py PATH [MODEL]
"""

from __future__ import annotations

import collections
import sys

from tomacs.analysis.text_report import load_side
from tomacs.sim import text_model as tmm

deb = load_side([sys.argv[1]])
if len(sys.argv) > 2:
    deb = [d for d in deb if d.model == sys.argv[2]]
common = tmm.common_stems(deb)
c = collections.Counter()
words = collections.Counter()
tot = 0
for d in deb:
    vocab = tmm._vocab(d)
    opts = tuple(d.options or ())
    for t in d.turns:
        if not t.text or t.round != 1 or d.is_adversarial(t.agent, 1):
            continue
        text = tmm._ANSWER_LINE.sub("", t.text)
        sents = tmm.split_sentences(text)
        tot += len(text.split())
        for s in sents:
            g = tmm.generic_form(s, vocab, t.answer, common, opts)
            if g:
                c[g] += 1
                words[g] += len(s.split())
print("generic words share", sum(words.values()) / tot)
for g, n in words.most_common(25):
    print(f"{n / tot:.4f} {c[g]:4d} {g}")
