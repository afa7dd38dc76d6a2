"""RUFS cases (AutoUFSTool ``RUFS.m`` with the start of ``Robust_unsupervised.m``, c = classes).

The case's c and its recorded K-means starts: ``sc.m`` runs MATLAB's ``kmeans`` (20 replicates),
which the authors' Octave run sent through Deng Cai's ``litekmeans``; the starts it drew
(``kmeans_inits``, one call) are injected as ``init``, so the spectral start is the same
partition. Every other setting is the ``released`` preset (nu 5, alpha 5, beta 4, MaxIter 10,
epsilon 1e-4).

On srbct and allaml the outcome of this pipeline is decided by round-off: the first G-block
starts from the 0/1 indicator, where the zeta = 1e7 penalty makes the objective ~1e9, and its
projected L-BFGS path (Armijo backtracking, stops on an absolute |f change| < 1e-3) branches on
the last bits. The authors' own code shows it: re-run with the golden files' settings it
reproduces them, but with another BLAS kernel or thread count, or on X perturbed by 1e-14
(relative), it keeps only the overlaps with its own golden output listed in
:data:`AUTHORS_RERUNS` (how they were made: :data:`RERUN_PROVENANCE`). jaffe stops after one
round and matches exactly. For the two round-off cases the property compared is therefore
:func:`weaker_property`: our top 50 and top 100 share with the golden output at least as many
features as the worst of those re-runs of the authors' code (:func:`floors`). No margin is
taken off: a port that behaved like one more such re-run would still fall below the least of
n = 8 of them with probability 1/(n + 1) = 0.11, which the measured numbers in the report let
one judge, while any margin would need a model of the spread that 8 runs cannot support.
"""

from __future__ import annotations

import numpy as np

from ufsbench.conformance import CUTS

#: How :data:`AUTHORS_RERUNS` were measured.
RERUN_PROVENANCE = (
    "2026-11-26, GNU Octave 7.3.0 with OpenBLAS 0.3.21 (DYNAMIC_ARCH; this AMD EPYC's default "
    "kernel is Cooperlake, the golden files' is Zen), AutoUFSTool @ 8e3231a: the preamble of "
    "Robust_unsupervised.m (k = 5 adaptive graph, [Label, L] = sc(A0, c), one-hot G0) with the "
    "case's c, then [W, F, G] = RUFS(X, L, G0, struct(nu 5, alpha 5, beta 4, MaxIter 10, "
    "epsilon 1e-4, verbose 1)), scores sum(W.^2, 2); MATLAB shims: kmeans -> litekmeans (same "
    "MaxIter / Replicates), randsample(n, k) = randperm(n, k)', subplus = max(x, 0); "
    "rand('state', 0); randn('state', 0) before the pipeline (every run drew the case's "
    "kmeans_inits). Perturbed runs: rand('state', s); E = 2 * rand(size(X)) - 1; "
    "X = X .* (1 + 1e-14 * E), s = 1..5, before that reseeding. Command: "
    "OPENBLAS_CORETYPE=Zen OPENBLAS_NUM_THREADS=1 octave-cli --eval \"dataset='srbct'; c=4; "
    "pseed=1; ...\" (CORETYPE unset for the default kernel, NUM_THREADS=2 for two threads).")

#: Top-h overlap (h = 50, 100) of the golden output with each re-run of the authors' code
#: (:data:`RERUN_PROVENANCE`), per case: (how the run differed from the golden one, overlaps).
#: The golden setting itself (Zen kernel, 1 thread) reproduced srbct bit for bit and allaml's
#: scores to 1.2e-11 of the largest (the same ranking down to rank 3260).
AUTHORS_RERUNS: dict[str, tuple[tuple[str, dict[int, int]], ...]] = {
    "rufs__srbct__demo_defaults": (
        ("Zen kernel, 2 threads", {50: 29, 100: 63}),
        ("default kernel, 1 thread", {50: 26, 100: 60}),
        ("default kernel, 2 threads", {50: 31, 100: 65}),
        ("X perturbed, s = 1", {50: 25, 100: 65}),
        ("X perturbed, s = 2", {50: 34, 100: 68}),
        ("X perturbed, s = 3", {50: 33, 100: 72}),
        ("X perturbed, s = 4", {50: 29, 100: 68}),
        ("X perturbed, s = 5", {50: 29, 100: 61}),
    ),
    "rufs__allaml__demo_defaults": (
        ("Zen kernel, 2 threads", {50: 47, 100: 94}),
        ("default kernel, 1 thread", {50: 49, 100: 98}),
        ("default kernel, 2 threads", {50: 44, 100: 92}),
        ("X perturbed, s = 1", {50: 46, 100: 96}),
        ("X perturbed, s = 2", {50: 49, 100: 98}),
        ("X perturbed, s = 3", {50: 47, 100: 90}),
        ("X perturbed, s = 4", {50: 48, 100: 91}),
        ("X perturbed, s = 5", {50: 48, 100: 95}),
    ),
}


def case_params(case: dict, X: np.ndarray) -> dict:
    (starts,) = case["kmeans_inits"]                # one litekmeans call, 20 replicates
    return {"n_clusters": int(case["params"]["c"]), "init": np.asarray(starts, dtype=np.intp)}


def floors(case_id: str) -> dict[int, tuple[int, int]]:
    """Per cut h, the (least, largest) top-h overlap the authors' re-runs keep with their own
    golden output; empty for a case that is not decided by round-off."""
    runs = AUTHORS_RERUNS.get(case_id, ())
    return {h: (min(r[h] for _, r in runs), max(r[h] for _, r in runs)) for h in CUTS if runs}


def weaker_property(case: dict, fits: dict) -> tuple[bool, str]:
    """For a round-off case: at each cut our top-m shares with the authors' golden top-m at least
    as many features as the least of their own re-runs does; ``(True, "")`` for the others."""
    bars = floors(case["case_id"])
    if not bars:
        return True, ""
    golden = case["ranking"]
    held, parts = True, []
    for m, (least, most) in bars.items():
        shared = len(set(fits[m].top_features(m).tolist()) & set(golden[:m]))
        held &= shared >= least
        parts.append(f"top {m}: {shared} shared (the authors' re-runs keep {least}-{most})")
    return bool(held), "round-off decides the authors' output (see module): " + "; ".join(parts)
