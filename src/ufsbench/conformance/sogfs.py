"""SOGFS cases (AutoUFSTool ``SOGFS.m`` @ 8e3231a): the case's gamma, projection dimension, c, k.

Why both shared cases (jaffe, m = 338, gamma = 100 and 1) are compared by a weaker property.
Every W-step of the authors' code starts from Q = I, where the m smallest eigenvalues of
X^T L_S X + gamma I are one eigenvalue of multiplicity d - rank > m (d = 676 > n = 213): any
m-dimensional part of its eigenspace solves (13), LAPACK returns one chosen by round-off, and the
reweighting rounds (up to 100, stopped at a change below 1e-6) start from it. So the authors'
output follows round-off: re-running their code on the same data with the same software (Octave
7.3.0, OpenBLAS 0.3.21, on an AMD EPYC) with 1 or 2 BLAS threads, or with X perturbed by 1e-15
(relative), kept only the overlaps with their own golden output listed in ``AUTHORS_RERUNS``
(the case's ``numerical_sensitivity``, one 2-thread run on the machine that made it, shows less
than that). Ours chooses that eigenspace's part deterministically (``ufsbench.numerics.
diag_lowrank``: nearest the lowest-leverage coordinate axes), one fixed point of the same
distribution; the property that holds is agreement with the golden output at least as close as
the authors' own re-runs keep, at the levels their re-runs reproduce:

* gamma = 100: W is a coordinate selection (exactly m scores of 1, the rest round-off), so only
  the SET of m is meaningful (the order inside it is round-off's: the top 50 / 100 are arbitrary
  members). Compared: that structure, and the overlap of the set of m.
* gamma = 1: about 358 rows of W keep norms 0.95-0.99, 1e-4 apart at rank 50, while round-off
  moves them by ~1e-2 between re-runs. Compared: the overlaps of the top 50, the top 100 and the
  set of m.
"""

from __future__ import annotations

import numpy as np

#: The gamma = 1 fit takes ~5 CPU s (about 100 dense 676 x 676 eigendecompositions).
SLOW_CASES = {"sogfs__jaffe__g1_m338"}

#: Overlap of the golden output's top-h set with the top-h sets of re-runs of the authors' code
#: (Octave 7.3.0 / OpenBLAS 0.3.21, AMD EPYC; runs in this order: 1 thread, 2 threads, then
#: 1 thread on X * (1 + 1e-15 N(0, 1)) with randn('state', s), s = 1, 2 (3, 4)); h = m is the
#: set of m. The gamma = 1 run with 2 threads even stopped one outer iteration earlier.
AUTHORS_RERUNS: dict[str, dict[int, tuple[int, ...]]] = {
    "sogfs__jaffe__g100_m338": {338: (275, 271, 275, 275)},
    "sogfs__jaffe__g1_m338": {50: (39, 39, 40, 40, 43, 42), 100: (86, 87, 87, 78, 85, 83),
                              338: (286, 284, 281, 280, 278, 282)},
}
#: gamma = 100: a score (||w_i||^2) within this of 1 is a selected axis, below it round-off.
UNIT_ROW_TOL = 1e-6


def case_params(case: dict, X) -> dict:
    params = case["params"]
    return {"gamma": float(params["gamma"]), "n_components": int(params["d_proj"]),
            "n_clusters": int(params["c"]), "k": int(params["k"])}


def _top(scores: np.ndarray, h: int) -> set:
    return set(np.argsort(-scores, kind="stable")[:h].tolist())


def weaker_property(case: dict, fits: dict) -> tuple[bool, str]:
    floors = AUTHORS_RERUNS.get(case["case_id"])
    if floors is None:
        return True, ""
    fit = next(iter(fits.values()))
    ours, theirs = fit.scores_ ** 2, np.asarray(case["scores"])
    held, parts = True, []
    m = int(case["params"]["d_proj"])
    if float(case["params"]["gamma"]) >= 100:
        unit = np.abs(ours - 1.0) <= UNIT_ROW_TOL
        structure = unit.sum() == m and np.all(ours[~unit] <= UNIT_ROW_TOL)
        held &= bool(structure)
        parts.append(f"{unit.sum()} unit rows (m = {m}), the rest round-off: {bool(structure)}")
    for h, overlaps in floors.items():
        shared = len(_top(ours, h) & _top(theirs, h))
        held &= shared >= min(overlaps)
        parts.append(f"top {h}: {shared} shared (the authors' re-runs keep {min(overlaps)}-"
                     f"{max(overlaps)})")
    return bool(held), "round-off decides the authors' output (see module): " + "; ".join(parts)
