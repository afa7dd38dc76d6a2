"""SOGFS cases (AutoUFSTool ``SOGFS.m`` @ 8e3231a): the case's gamma, projection dimension, c, k.

Why both shared cases (jaffe, m = 338, gamma = 100 and 1) are compared by a weaker property.
Every W-step of the authors' code starts from Q = I, where the m smallest eigenvalues of
X^T L_S X + gamma I are one eigenvalue of multiplicity d - rank > m (d = 676 > n = 213): any
m-dimensional part of its eigenspace solves (13), LAPACK returns one chosen by round-off, and the
reweighting rounds (up to 100, stopped at a change below 1e-6) start from it. So the authors'
output follows round-off: their code, re-run with the golden file's setting (OpenBLAS's Zen
kernel, 1 thread), reproduces it, but with another BLAS kernel or thread count, or on X
perturbed by 1e-15 or 1e-14 (relative), keeps only the overlaps with its own golden output
listed in :data:`AUTHORS_RERUNS` (how they were made: :data:`RERUN_PROVENANCE`). Ours chooses
that eigenspace's part deterministically (``ufsbench.numerics.diag_lowrank``: nearest the
lowest-leverage coordinate axes), one fixed point of the same distribution; the property
compared is agreement with the golden output at least as close as the least of the authors'
re-runs keeps (:func:`floors`), at the levels their re-runs reproduce:

* gamma = 100: W is a coordinate selection (exactly m scores of 1, the rest round-off), so only
  the SET of m is meaningful (the order inside it is round-off's: the top 50 / 100 are arbitrary
  members). Compared: that structure, and the overlap of the set of m.
* gamma = 1: about 358 rows of W keep norms 0.95-0.99, 1e-4 apart at rank 50, while round-off
  moves them by ~1e-2 between re-runs. Compared: the overlaps of the top 50, the top 100 and the
  set of m.

No margin is taken off the least re-run: a port behaving like one more re-run would fall below
the least of n with probability 1/(n + 1) (n = 11 distinct runs at gamma = 1), and a margin
would need a model of the spread that so few runs cannot support.

Known difference (:data:`KNOWN_DIFFERENCES`): at gamma = 1 our top 50 shares 37 features with
the golden top 50, below every one of the 11 distinct re-runs of the authors' code (39-46, mean
41.3, sd 2.1) and below a normal-theory 95% one-sided prediction bound from them (37.4); our top
100 (82; re-runs 78-88) and set of m (285; re-runs 275-286) are inside their spread. The bar is
not lowered: the case is reported as differing at the top 50.
"""

from __future__ import annotations

import numpy as np

#: Cases too slow for the default suite: none (the gamma = 1 fit, the slowest, takes ~5 CPU s:
#: about 100 dense 676 x 676 eigendecompositions).
SLOW_CASES: set[str] = set()

#: How :data:`AUTHORS_RERUNS` were measured (two series, both on this project's machine: an AMD
#: EPYC whose default OpenBLAS kernel is Cooperlake, while the golden files used Zen).
RERUN_PROVENANCE = (
    "Series A (recorded 2026-11-26): GNU Octave 7.3.0, OpenBLAS 0.3.21 (DYNAMIC_ARCH), default kernel, "
    "AutoUFSTool @ 8e3231a, ranking = SOGFS(X, gamma, 338, 10, 5) with X = double(S.X): 1 thread, "
    "2 threads, then 1 thread on X .* (1 + 1e-15 * randn(size(X))) after randn('state', s), "
    "s = 1, 2 (gamma = 100) or 1..4 (gamma = 1).",
    "Series B (2026-11-26, gamma = 1): same software and call; OPENBLAS_CORETYPE=Zen "
    "OPENBLAS_NUM_THREADS=1 reproduced the golden ranking exactly; Zen kernel with "
    "OPENBLAS_NUM_THREADS=2; default kernel, 1 thread (the same overlaps as series A's); Zen "
    "kernel, 1 thread, on X .* (1 + 1e-14 * E), E = 2 * rand(size(X)) - 1 after rand('state', s), "
    "s = 1..4. Command: OPENBLAS_CORETYPE=Zen OPENBLAS_NUM_THREADS=1 octave-cli --eval "
    "\"S = load('jaffe.mat'); X = double(S.X); rand('state', s); E = 2*rand(size(X)) - 1; "
    "X = X .* (1 + 1e-14*E); ranking = SOGFS(X, 1, 338, 10, 5);\".",
)

#: Top-h overlap of the golden output with each distinct re-run of the authors' code
#: (:data:`RERUN_PROVENANCE`), per case: (how the run differed from the golden one, overlaps);
#: h = m is the set of m. The gamma = 1 run with 2 threads (series A) even stopped one outer
#: iteration earlier.
AUTHORS_RERUNS: dict[str, tuple[tuple[str, dict[int, int]], ...]] = {
    "sogfs__jaffe__g100_m338": (
        ("A: default kernel, 1 thread", {338: 275}),
        ("A: default kernel, 2 threads", {338: 271}),
        ("A: X perturbed by 1e-15, s = 1", {338: 275}),
        ("A: X perturbed by 1e-15, s = 2", {338: 275}),
    ),
    "sogfs__jaffe__g1_m338": (
        ("A: default kernel, 1 thread", {50: 39, 100: 86, 338: 286}),
        ("A: default kernel, 2 threads", {50: 39, 100: 87, 338: 284}),
        ("A: X perturbed by 1e-15, s = 1", {50: 40, 100: 87, 338: 281}),
        ("A: X perturbed by 1e-15, s = 2", {50: 40, 100: 78, 338: 280}),
        ("A: X perturbed by 1e-15, s = 3", {50: 43, 100: 85, 338: 278}),
        ("A: X perturbed by 1e-15, s = 4", {50: 42, 100: 83, 338: 282}),
        ("B: Zen kernel, 2 threads", {50: 42, 100: 88, 338: 275}),
        ("B: X perturbed by 1e-14, s = 1", {50: 40, 100: 86, 338: 286}),
        ("B: X perturbed by 1e-14, s = 2", {50: 41, 100: 84, 338: 282}),
        ("B: X perturbed by 1e-14, s = 3", {50: 42, 100: 88, 338: 285}),
        ("B: X perturbed by 1e-14, s = 4", {50: 46, 100: 85, 338: 280}),
    ),
}
#: Cases where ours falls below the authors' re-runs: the parts of the weaker property (levels h)
#: that fail (see the module docstring); every other part must still hold.
KNOWN_DIFFERENCES: dict[str, frozenset] = {"sogfs__jaffe__g1_m338": frozenset({50})}
#: gamma = 100: a score (||w_i||^2) within this of 1 is a selected axis, below it round-off.
UNIT_ROW_TOL = 1e-6


def case_params(case: dict, X) -> dict:
    params = case["params"]
    return {"gamma": float(params["gamma"]), "n_components": int(params["d_proj"]),
            "n_clusters": int(params["c"]), "k": int(params["k"])}


def floors(case_id: str) -> dict[int, tuple[int, int]]:
    """Per level h, the (least, largest) top-h overlap the authors' re-runs keep with their own
    golden output; empty for a case without re-runs."""
    runs = AUTHORS_RERUNS.get(case_id, ())
    levels = sorted({h for _, overlaps in runs for h in overlaps})
    return {h: (min(r[h] for _, r in runs), max(r[h] for _, r in runs)) for h in levels}


def _top(scores: np.ndarray, h: int) -> set:
    return set(np.argsort(-scores, kind="stable")[:h].tolist())


def property_parts(case: dict, fits: dict) -> tuple[dict, str]:
    """Each part of the weaker property ("structure" at gamma = 100, then each level h) -> held,
    and the report; ``({}, "")`` for a case without re-runs."""
    bars = floors(case["case_id"])
    if not bars:
        return {}, ""
    fit = next(iter(fits.values()))
    ours, theirs = fit.scores_ ** 2, np.asarray(case["scores"])
    held: dict = {}
    parts = []
    m = int(case["params"]["d_proj"])
    if float(case["params"]["gamma"]) >= 100:
        unit = np.abs(ours - 1.0) <= UNIT_ROW_TOL
        held["structure"] = bool(unit.sum() == m and np.all(ours[~unit] <= UNIT_ROW_TOL))
        parts.append(f"{unit.sum()} unit rows (m = {m}), the rest round-off: "
                     f"{held['structure']}")
    for h, (least, most) in bars.items():
        shared = len(_top(ours, h) & _top(theirs, h))
        held[h] = shared >= least
        parts.append(f"top {h}: {shared} shared (the authors' re-runs keep {least}-{most})"
                     + ("" if held[h] else ": BELOW"))
    return held, "round-off decides the authors' output (see module): " + "; ".join(parts)


def weaker_property(case: dict, fits: dict) -> tuple[bool, str]:
    held, text = property_parts(case, fits)
    return all(held.values()), text
