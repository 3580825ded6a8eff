"""Issue 38, stop 75: the share of replies that walk through the options (lines opening with the letters of 3
options or more), by role and phase, and the most used forms of those lines (first 40 characters).

Usage: python scripts/oneoff/s75/walk_shares.py PATH MODEL|- [PATH MODEL|- ...]
"""

from __future__ import annotations

import collections
import re
import sys

from tomacs.analysis.text_report import load_side

HEAD = re.compile(
    r"^\s*(?:#+\s*)?(?:\d+[.)]\s*)?(?:[-*•]\s*)?(?:\*\*)?\s*(?:Option|Choice|Answer)?\s*\(?([A-J])\)?\s*(?:[:.)\-]|\*\*|$)",
    re.I,
)
for path, model in [
    (a, b if b != "-" else None) for a, b in zip(sys.argv[1::2], sys.argv[2::2], strict=False)
]:
    deb = load_side([path])
    if model:
        deb = [d for d in deb if d.model == model]
    c = collections.Counter()
    n = collections.Counter()
    forms = collections.Counter()
    for d in deb:
        k = len(d.options or ())
        for t in d.turns:
            if not t.text:
                continue
            role = ("adv" if d.is_adversarial(t.agent, t.round) else "hon") + ("1" if t.round == 1 else "2+")
            lines = [ln for ln in t.text.splitlines() if ln.strip()]
            hits = {}
            for ln in lines:
                m = HEAD.match(ln)
                if m and m.group(1).upper() in d.letters[:k] and m.group(1).upper() not in hits:
                    hits[m.group(1).upper()] = ln
            n[role] += 1
            if len(hits) >= min(3, k):
                c[role] += 1
                for L, ln in hits.items():
                    f = ln.strip().replace(L, "{L}", 1)
                    f = re.sub(r"\s+", " ", f)[:40]
                    forms[f] += 1
    print(path.split("/")[-1], model, {r: f"{c[r] / n[r]:.2f} ({n[r]})" for r in sorted(n)})
    print("   ", forms.most_common(6))
