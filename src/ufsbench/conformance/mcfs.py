"""MCFS cases: Deng Cai's ``MCFS_p.m`` asked for the counts (50, 100) in one call.

``MCFS_p`` runs one LARS path per eigenvector to the largest count and takes, for each count h,
the last step with h active variables: ``path_cardinality`` = the largest count asked. K is the
case's ``nUseEigenfunction`` (c in the shared cases) and k its neighbours.

Where the kNN graph has C > 1 connected components, the eigenvalue 0 of the generalised problem
is C-fold; beside the constant vector, ``MCFS_p`` regresses whichever basis of the remaining
(C - 1)-dimensional eigenspace LAPACK returned, and each basis vector's l1 regression selects
other features (jaffe, k = 5: C = 6; the authors' own rerun with 2 BLAS threads kept 41 of its
top 50; our fits with 12 random rotations of that basis agree with each other at Jaccard
0.47-0.75 and with the authors' sets at 0.49-0.72). Set agreement there measures the basis, not the code, so
:func:`weaker_property` checks what does not depend on it: the coefficient vectors of the
K - (C - 1) eigenvectors of simple eigenvalues. Each is its own regression, so the authors'
score max_k |a_kj| must be at least our |a_kj| for every feature j and such k, with equality
(relative 1e-6) wherever one of them attains the maximum.
"""

from __future__ import annotations

import numpy as np

from ufsbench.conformance import CUTS
from ufsbench.numerics.linalg import degenerate_clusters

#: Relative agreement of two LARS coefficients (the three cases agree to 1e-9 of the largest).
SCORE_RTOL = 1e-6


def case_params(case: dict, X: np.ndarray) -> dict:
    params = case["params"]
    return {"k": int(params["k"]), "n_components": int(params["nUseEigenfunction"]),
            "path_cardinality": max(int(h) for h in params["FeaNumCandi"])}


def authors_scores(case: dict, m: int) -> np.ndarray:
    """max_k |a_kj| of the authors' cardinality-m coefficients (``scores`` for the largest)."""
    largest = max(int(h) for h in case["params"]["FeaNumCandi"])
    return np.asarray(case["scores"] if m == largest else case["extra"][f"scores_card{m}"])


def weaker_property(case: dict, fits: dict) -> tuple[bool, str]:
    multiple = degenerate_clusters(fits[max(CUTS)].eigenvalues_)
    if not multiple:
        return True, ""
    shared = np.concatenate(multiple)
    simple = np.setdiff1d(np.arange(fits[max(CUTS)].coef_.shape[1]), shared)
    ok, notes = True, []
    for m in CUTS:
        theirs = authors_scores(case, m)
        ours = np.abs(fits[m].coef_[:, simple]).max(axis=1)
        tol = SCORE_RTOL * theirs.max()
        excess = float(np.max(ours - theirs))
        attained = np.abs(ours - theirs) <= tol
        # every simple eigenvector attains the authors' maximum on some of its features
        per_vector = [int(np.sum(attained & (np.abs(fits[m].coef_[:, k]) > 0)
                                 & np.isclose(np.abs(fits[m].coef_[:, k]), ours, rtol=0,
                                              atol=tol))) for k in simple]
        ok &= excess <= tol and min(per_vector) > 0
        notes.append(f"{m}: max excess {excess / theirs.max():.1e}, {int(attained[ours > 0].sum())}"
                     f" of {int(np.sum(ours > 0))} equal")
    values = fits[max(CUTS)].eigenvalues_
    # the constant vector (dropped from the embedding) shares the eigenvalue 0
    zero = [abs(values[run[0]]) < 1e-8 for run in multiple]
    folds = ", ".join(f"{run.size + z}-fold eigenvalue {0 if z else values[run[0]]:.2g}"
                      for run, z in zip(multiple, zero))
    return bool(ok), (f"{folds}: its basis decides the sets; the {simple.size} simple "
                      f"eigenvectors' coefficients checked: " + "; ".join(notes))
