"""UFSOL's ``released`` preset against the authors' ``UFSwithOL`` (AutoUFSTool @ 8e3231a).

A case's call is ``UFSwithOL(X', c, para)`` with para.p1 = alpha, para.p2 = beta; every other
setting is hard-coded in their code and held by the preset. The K-means starts their
``litekmeans`` drew (``kmeans_inits``: the initial call, then one per iteration, 10 replicates
each) are injected, so the comparison is exact.

Locked on init. Their W starts at the first c coordinate axes, and a zero row of W gets the
weight beta / 5e-7 in the next W-step. Unless alpha L competes with it (alpha = 1e6), W never
leaves those axes: at (alpha, beta) = (1, 1) and (1e2, 1e4) the authors' top c are exactly
features 0..c-1 (squared row norms 1 up to round-off) and every other score is round-off
(< 1e-6 of the largest, mostly ~1e-19), whose order moves with the BLAS thread count (jaffe,
``numerical_sensitivity``: 31/50 and 18/50 of the top 50 kept). Their top-50/top-100 sets below
rank c are noise, so on such a case (recognised from its scores, :func:`locked_on_init`) the
comparison is the property that carries its information: our top c are features 0..c-1 and every
other squared row norm of our W is below the same 1e-6 of the largest.
"""

from __future__ import annotations

import numpy as np

#: Squared row norms below this fraction of the largest count as round-off on a locked case
#: (the authors' own tails reach 3e-8 of it on srbct, 3e-19 on jaffe; ours 4e-8 and 5e-20).
LOCKED_TAIL = 1e-6
#: Cases too slow for the default suite: none. The srbct cases (d = 2308), the slowest, need ten
#: eigendecompositions of a 2308 x 2308 matrix: ~10 s of CPU each (130-310 s in the authors'
#: Octave run); jaffe's three take ~2.5 s together.
SLOW_CASES: set[str] = set()


def case_params(case: dict, X: np.ndarray) -> dict:
    """The case's alpha, beta, c, k and iteration count, and its recorded K-means starts."""
    params = case["params"]
    return {"alpha": float(params["alpha"]), "beta": float(params["beta"]),
            "n_clusters": int(params["nClass"]), "k": int(params["k_neighbors"]),
            "max_iter": int(params["max_Iter"]), "kmeans_init": case["kmeans_inits"],
            "random_state": 0}


def _locked(scores: np.ndarray, c: int) -> bool:
    """Top c = features 0..c-1 and every other score below LOCKED_TAIL of the largest."""
    top = np.argsort(-scores, kind="stable")[:c]
    rest = np.delete(scores, np.arange(c))
    return set(top.tolist()) == set(range(c)) and bool(np.all(rest < LOCKED_TAIL * scores.max()))


def locked_on_init(case: dict) -> bool:
    """Whether the authors' W stayed on the initial axes (their scores are squared norms)."""
    return _locked(np.asarray(case["scores"], dtype=float), int(case["params"]["nClass"]))


def weaker_property(case: dict, fits: dict) -> tuple[bool, str]:
    """On a case locked on init: ours is locked on the same axes (see the module docstring)."""
    if not locked_on_init(case):
        return True, ""
    c = int(case["params"]["nClass"])
    fit = next(iter(fits.values()))
    held = _locked(np.asarray(fit.scores_, dtype=float) ** 2, c)
    return held, (f"locked on init: top {c} = features 0..{c - 1}, the rest < {LOCKED_TAIL:g} "
                  f"of the largest (sets below rank {c} are round-off)")
