"""SCFS cases (mohsengh/SCFS ``SCFS.py``): the case's alpha, beta and c, and its recorded start.

The authors' start is fuzzy c-means from ``np.random.rand`` draws; the selection moves a lot with
the seed (top-100 overlap 31-53 of 100 between seeds), so the case's own G0 (``init.G0_n_by_c``)
is injected and the comparison is exact. ``init="cmeans"`` with the case's seed draws the same
u0 and gives that G0 too (to 3e-16; ``tests/methods/test_scfs.py``). Every case also stops after
the authors' number of iterations (2-5) and ranks the features in their order.
"""

from __future__ import annotations

import numpy as np


def case_params(case: dict, X: np.ndarray) -> dict:
    params = case["params"]
    return {"alpha": float(params["alpha"]), "beta": float(params["beta"]),
            "n_clusters": int(params["n_clusters"]),
            "init": np.asarray(case["init"]["G0_n_by_c"], dtype=float)}
