"""Laplacian Score cases: Deng Cai's ``LaplacianScore.m`` with a ``constructW`` graph.

``k5_heat`` is ``constructW``'s default heat kernel (the ``released`` preset as it stands);
``k5_cosine`` its Cosine weighting (``weight="cosine"``). Both use k = 5 neighbours.
"""

from __future__ import annotations

import numpy as np


def case_params(case: dict, X: np.ndarray) -> dict:
    params = case["params"]
    weight = {"HeatKernel": "heat", "Cosine": "cosine", "Binary": "binary"}[params["WeightMode"]]
    return {"k": int(params["k"]), "weight": weight}
