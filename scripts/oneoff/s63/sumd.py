"""Per-round credit AUC (P(honest credit > adversary's), pooled over debates) of dist.sh's replays: on the
held-out real debates (the test) and on the fitting questions' debates (all of the model's debates less
the held-out ones: the validation). Usage: sumd.py RUN_PREFIX... (e.g. outputs/s63/ds1_mad-qwen-max_s0)"""

from __future__ import annotations

import json
import sys

from tomacs.analysis.credit import auc


def round_aucs(debates: list[dict]) -> dict[str, float]:
    out = {}
    keys = sorted({k for d in debates for k in d["credits"]}, key=lambda k: (k == "decision", k))
    for k in keys:
        hon, adv = [], []
        for d in debates:
            if k not in d["credits"]:
                continue
            seen = d["n_rounds"] if k == "decision" else int(k) - 1  # the last round the credits read
            for i, c in enumerate(d["credits"][k]):
                onset = d["onsets"].get(str(i))
                if onset is None:
                    hon.append(c)
                elif onset <= seen:
                    adv.append(c)
        if hon and adv:
            out[k] = auc(hon, adv)
    return out


def main() -> None:
    for prefix in sys.argv[1:]:
        test = json.load(open(f"{prefix}.replay.json"))["debates"]
        held = {d["id"] for d in test}
        fit = [d for d in json.load(open(f"{prefix}.all.json"))["debates"] if d["id"] not in held]
        a_test, a_fit = round_aucs(test), round_aucs(fit)
        cells = "  ".join(f"{k}: {a_fit.get(k, float('nan')):.3f} / {a_test[k]:.3f}" for k in a_test)
        print(f"{prefix.split('/')[-1]:<28} (val {len(fit)} / test {len(test)} debates)  {cells}")


if __name__ == "__main__":
    main()
