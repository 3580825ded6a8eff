"""Issue 39/38 one-off (stop 58): Real adversary AUC (MiniLM probe, folds by question) with the 5-point
scale's words masked (PATH MODEL).
"""

import re
import sys

import numpy as np

from tomacs.analysis import texts as T
from tomacs.analysis.text_report import embedding_function
from tomacs.sim import from_episodes as fx

model = sys.argv[2]
deb = fx.read_debates([sys.argv[1]], model)
reps = [r for r in T.replies_of(deb, True) if r.acting]
emb = embedding_function("minilm")
pat = re.compile(r"(completely|mostly)\s+(un)?acceptable|neutral|situation[- ]dependent", re.I)
y = np.array([r.adversarial for r in reps], float)
g = [r.question for r in reps]
for name, texts in (
    ("as written", [r.text for r in reps]),
    ("scale phrases masked", [pat.sub("that rating", r.text) for r in reps]),
    ("phrases+letters masked", [re.sub(r"\b[A-E]\b", "X", pat.sub("that rating", r.text)) for r in reps]),
):
    x = emb(texts)
    print(name, round(T.cv_auc(x, y, g), 3), flush=True)
