"""RUFS cases (AutoUFSTool ``RUFS.m`` with the start of ``Robust_unsupervised.m``, c = classes).

The case's c and its recorded K-means starts: ``sc.m`` runs MATLAB's ``kmeans`` (20 replicates),
which the authors' Octave run sent through Deng Cai's ``litekmeans``; the starts it drew
(``kmeans_inits``, one call) are injected as ``init``, so the spectral start is the same
partition. Every other setting is the ``released`` preset (nu 5, alpha 5, beta 4, MaxIter 10,
epsilon 1e-4).

On srbct and allaml the outcome of this pipeline is decided by round-off: the first G-block
starts from the 0/1 indicator, where the zeta = 1e7 penalty makes the objective ~1e9, and its
projected L-BFGS path (Armijo backtracking, stops on an absolute |f change| < 1e-3) branches on
the last bits. Measured with our fit: perturbing X by 1e-14 relative keeps only 22-32 of its
top 50 on srbct and 43-49 of 50 on allaml (10 perturbations each); the authors' srbct ranking
keeps 29 of 50 with 2 BLAS threads instead of 1 (allaml was not re-run). jaffe stops after one
round and matches exactly. For the two round-off cases the property compared is therefore
:func:`weaker_property`: our top-m agrees with the authors' at least as well as with our own fit
on X perturbed by 1e-14 (the lowest Jaccard of ``PERTURBATIONS`` such refits).
"""

from __future__ import annotations

import numpy as np

from ufsbench.conformance import CUTS, authors_set, case_data, jaccard

#: Cases whose selection is decided by round-off (see above).
ROUND_OFF_CASES = {"rufs__srbct__demo_defaults", "rufs__allaml__demo_defaults"}
#: Refits on perturbed X that set the bar of a round-off case, and the relative perturbation.
PERTURBATIONS, PERTURBATION = 3, 1e-14
#: allaml: four 72 x 7129 fits (~9 s); srbct's four fits stay in the default suite (~4 s).
SLOW_CASES = {"rufs__allaml__demo_defaults"}


def case_params(case: dict, X: np.ndarray) -> dict:
    (starts,) = case["kmeans_inits"]                # one litekmeans call, 20 replicates
    return {"n_clusters": int(case["params"]["c"]), "init": np.asarray(starts, dtype=np.intp)}


def weaker_property(case: dict, fits: dict) -> tuple[bool, str]:
    """For a round-off case: Jaccard(ours, authors) >= min over perturbed refits of
    Jaccard(ours, ours on X (1 + 1e-14 z)) at both cuts; ``(True, "")`` for the other cases."""
    if case["case_id"] not in ROUND_OFF_CASES:
        return True, ""
    from ufsbench.methods import make_selector

    X = case_data(case)
    ours = {m: set(fits[m].top_features(m).tolist()) for m in CUTS}
    bar = dict.fromkeys(CUTS, 1.0)
    for seed in range(1, PERTURBATIONS + 1):
        noise = np.random.default_rng(seed).standard_normal(X.shape)
        refit = make_selector("rufs", preset="released", n_features_to_select=max(CUTS),
                              **case_params(case, X)).fit(X * (1 + PERTURBATION * noise))
        for m in CUTS:
            bar[m] = min(bar[m], jaccard(ours[m], set(refit.top_features(m).tolist())))
    score = {m: jaccard(ours[m], authors_set(case, m)) for m in CUTS}
    held = all(score[m] >= bar[m] for m in CUTS)
    text = ", ".join(f"{score[m]:.2f} >= {bar[m]:.2f} at {m}" for m in CUTS)
    return held, (f"round-off decides this case: Jaccard with the authors vs with our own fit "
                  f"on X perturbed by {PERTURBATION:g} (lowest of {PERTURBATIONS}): {text}")
