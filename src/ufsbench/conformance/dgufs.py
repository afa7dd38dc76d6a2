"""DGUFS cases: the authors' ``DGUFS.m`` called for m = 50 and 100 with a given S.

The ``released`` preset is ``DGUFS.m`` itself (mu0 1e-6, 5 iterations, its Z, Y, L, M order and
``speedUp`` scaling); a case sets alpha, beta, c and the graph its S came from: ``knn`` cases
``getS(X', 5, 1)`` (graph="knn_self", k = 5 counting the sample itself), ``negdist`` cases
-D / max(D) (graph="negdist"). On every case L stays 0 and the selection is the m features of
smallest norm, which both our fit and the authors' reach; compared exactly.
"""

from __future__ import annotations

import numpy as np


def case_params(case: dict, X: np.ndarray) -> dict:
    params = case["params"]
    graph = "negdist" if case["case_id"].endswith("_negdist") else "knn_self"
    return {"alpha": float(params["alpha"]), "beta": float(params["beta"]),
            "n_clusters": int(params["nClass"]), "graph": graph, "k": 5}
