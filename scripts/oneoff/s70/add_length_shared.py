"""Issue 38, stop 70: carry `length_shared` into the shipped profiles' text models from a refit, answer models
untouched.

`tomacs sim fit-episodes` (what `make profiles` runs) refits the answer model too, and its optimiser lands
within 1e-5 of the shipped parameters, not on them; the text model is deterministic, and a refit's text
section differs from the shipped one only by the new `length_shared` lines. So each is inserted after the same
occurrence of the line before it, and the script fails if anything else in the text sections differs.
Usage: python add_length_shared.py SHIPPED.yaml REFIT.yaml
"""

from __future__ import annotations

import sys


def text_section(lines: list[str]) -> list[str]:
    return lines[lines.index("text:\n") :]


def main() -> None:
    shipped_path, refit_path = sys.argv[1], sys.argv[2]
    shipped = open(shipped_path).readlines()
    refit = open(refit_path).readlines()
    st, rt = text_section(shipped), text_section(refit)
    plain = [ln for ln in rt if "length_shared:" not in ln]
    differ = [
        (a, b) for a, b in zip(st, plain, strict=True) if a != b and not a.lstrip().startswith("source:")
    ]
    if differ:
        raise SystemExit(f"{shipped_path}: the text sections differ beyond length_shared: {differ[:3]}")
    out = shipped[: len(shipped) - len(st)]
    k = 0
    for ln in rt:
        if "length_shared:" in ln:
            out.append(ln)
        else:
            out.append(st[k])
            k += 1
    open(shipped_path, "w").writelines(out)
    print(shipped_path, sum("length_shared:" in ln for ln in rt), "length_shared lines")


if __name__ == "__main__":
    main()
