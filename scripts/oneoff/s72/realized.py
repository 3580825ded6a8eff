"""A profile's fitted text statistics beside those of its simulated episodes, refitted (stop 71; stop 72 adds
`answering_share`).

python scripts/oneoff/s72/realized.py SIMRUN PROFILE
"""

import sys

from tomacs.analysis.text_report import load_side
from tomacs.sim.profiles import load_text_model, resolve_profile
from tomacs.sim.text_model import fit_text_model

KEYS = (
    "log_words_mean",
    "generic_share",
    "opener_share",
    "closer_share",
    "topic_density",
    "answer_rate",
    "answering_share",
)


def main() -> None:
    sim = load_side([sys.argv[1]])
    got = fit_text_model(sim)
    prof = load_text_model(resolve_profile(sys.argv[2])[2])
    for role in ("honest", "adversary"):
        for phase in ("first", "later"):
            a, b = prof.get(role, phase), got.get(role, phase)
            print(role, phase, " ".join(f"{k}={getattr(a, k):.3f}/{getattr(b, k):.3f}" for k in KEYS))
            print("   mentions", a.mentions, b.mentions, "others", a.others_named, b.others_named)


if __name__ == "__main__":
    main()
