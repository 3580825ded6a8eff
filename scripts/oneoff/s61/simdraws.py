"""Stop 61: one policy, one test draw of adversary plans, other draws of the simulated agents.

Runs `tomacs` with the sim backbone's per-request seed shifted by TOMACS_SIM_OFFSET x 1000, so the
executor's adversary plans (keyed by the episode seed) stay those of `eval.seed`, and only the agents' answers
and texts are drawn anew. The spread of a fixed checkpoint's Acc over offsets is the evaluation's own noise
floor for the paired seed std.
Usage: TOMACS_SIM_OFFSET=K python -P scripts/oneoff/s61/simdraws.py evaluate ...
"""

import os

from tomacs.cli import main
from tomacs.sim.backbone import SimBackbone

OFFSET = 1000 * int(os.environ["TOMACS_SIM_OFFSET"])
_orig = SimBackbone._seed


def _shifted(self: SimBackbone, req: object) -> int:
    return _orig(self, req) + OFFSET  # type: ignore[arg-type]


SimBackbone._seed = _shifted  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
