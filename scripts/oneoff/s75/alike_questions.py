"""Issue 38, stop 75: MiniLM cosine of honest round-1 replies to the same question (same answer) and to
different questions, and of an adversary with the honest replies of its own and of other questions.

Usage: python scripts/oneoff/s75/alike_questions.py PATH [MODEL|-]
"""

from __future__ import annotations

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side

path = sys.argv[1]
model = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
deb = load_side([path])
if model:
    deb = [d for d in deb if d.model == model]
H, A = [], []  # (debate index, answer, text)
for i, d in enumerate(deb):
    for t in d.turns:
        if t.round == 1 and t.text:
            (A if d.is_adversarial(t.agent, 1) else H).append((i, t.answer, t.text))
x = embedding_function("minilm")([h[2] for h in H] + [a[2] for a in A])
x = x / np.linalg.norm(x, axis=1, keepdims=True)
xh, xa = x[: len(H)], x[len(H) :]
S = xh @ xh.T
same_q = np.array([[H[i][0] == H[j][0] for j in range(len(H))] for i in range(len(H))])
same_a = np.array([[H[i][1] == H[j][1] for j in range(len(H))] for i in range(len(H))])
off = ~np.eye(len(H), dtype=bool)
w = S[same_q & same_a & off].mean()
b = S[~same_q].mean()
SA = xa @ xh.T
qa = np.array([[A[i][0] == H[j][0] for j in range(len(H))] for i in range(len(A))])
print(
    path,
    model,
    f"honest-honest same q {w:.3f}  diff q {b:.3f}",
    f"adv-honest same q {SA[qa].mean():.3f}  adv-honest diff q {SA[~qa].mean():.3f}",
)
