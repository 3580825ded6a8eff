"""What the words of replies are made of, by the fit's sentence kinds, simulated beside real (stop 71;
reused at stop 72).

python scripts/oneoff/s72/composition.py SIMRUN REALDIR MODEL [ROLE] [ROUND]
"""

import sys
from collections import Counter

from tomacs.analysis.text_report import load_side
from tomacs.sim import text_model as tm
from tomacs.sim.from_episodes import select_debates


def kind(s: str, vocab: set, answer: str | None, common: set, opts: tuple, named: str | None) -> str:
    words = s.split()
    if not tm.SENT_WORDS[0] <= len(words) <= tm.SENT_WORDS[1]:
        return "short" if len(words) < tm.SENT_WORDS[0] else "long"
    if tm._DIGIT.search(tm._AGENT_NUM.sub("", s)):
        return "digit"
    low = s.lower()
    if named and named.lower() in low:
        return "answer text"
    if any(len(o.strip()) >= 3 and o.strip().lower().rstrip(".") in low for o in opts):
        return "other option text"
    if tm.generic_form(s, vocab, answer, common, opts):
        return "generic"
    return "topic-heavy"


def main() -> None:
    sim_dir, real_dir, model = sys.argv[1:4]
    role = sys.argv[4] if len(sys.argv) > 4 else "adversary"
    rnd = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    for name, deb in (("sim", load_side([sim_dir])), ("real", select_debates(load_side([real_dir]), model))):
        common = tm.common_stems(deb)
        c: Counter = Counter()
        words = 0
        firsts: Counter = Counter()
        lasts: Counter = Counter()
        n = 0
        for d in deb:
            vocab = tm._vocab(d)
            opts = tuple(d.options or ())
            for t in d.turns:
                if t.round != rnd or not t.text:
                    continue
                if ("adversary" if d.is_adversarial(t.agent, t.round) else "honest") != role:
                    continue
                named = tm.named_answer(d.letters, opts, t.answer)
                text = tm._ANSWER_LINE.sub("", t.text)
                sents = tm.split_sentences(text)
                words += len(text.split())
                n += 1
                ks = [kind(s, vocab, t.answer, common, opts, named) for s in sents]
                for s, k in zip(sents, ks, strict=True):
                    c[k] += len(s.split())
                if ks:
                    firsts[ks[0]] += 1
                    lasts[ks[-1]] += 1
        print(f"== {name} {role} round {rnd}: {n} replies, {words / max(n, 1):.0f} words")
        print("   words:", {k: round(v / words, 3) for k, v in c.most_common()})
        print("   first sentence:", {k: round(v / n, 3) for k, v in firsts.most_common()})
        print("   last sentence:", {k: round(v / n, 3) for k, v in lasts.most_common()})


if __name__ == "__main__":
    main()
