"""UDFS case: ``udfs(X, c)`` with its wrapper defaults (gamma = lamda = 1e-5, one neighbour, 20
fixed iterations; README item 9).

At these values the top-m sets are not determined by the model (see the UDFS module docstring):
the first step is any basis of part of the >= 529-dimensional null space of X^T L_loc X on
jaffe, and the l2,1 reweighting descends from it to one of many local minima (eight random
null-space bases: top-50 Jaccard 0.04-0.11 between each other). What both runs share is the
objective they descend, J(W) = Tr(W^T X^T L_loc X W) + gamma sum_i sqrt(||w^i||^2 + eps), the
quantity of the authors' ``obj`` and of our ``objective_history_`` (the same formula). So the
property checked is about J at the end of the 20 iterations:

* ours <= the authors' (relative slack 1e-9): we minimise the same objective at least as well
  (only an upper bound is comparable: the minimiser is not unique); measured 2.32e-4 against
  2.63e-4;
* the authors' <= 1.25 x ours: the same model. J is gamma times an l2,1 norm of an orthonormal
  d x c matrix (between c and sqrt(c d) on its own), so a wrong gamma, eps or scaling of the
  local Laplacian moves it by a large factor, while the local minima reached from the first
  step's equally valid bases span 1.05-1.14 x ours (2.44e-4 .. 2.65e-4 over eight bases).
"""

from __future__ import annotations

import numpy as np

#: The authors' final objective may exceed ours by at most this factor (see above).
OBJECTIVE_SPREAD = 1.25


def case_params(case: dict, X: np.ndarray) -> dict:
    """The case's c, neighbours and weights (the ``released`` preset holds the wrapper's)."""
    params = case["params"]
    return {"n_clusters": int(params["nClass"]), "k": int(params["knn_param"]),
            "gamma": float(params["gamma"]), "lam": float(params["lamda"]),
            "max_iter": int(params["NIter"])}


def weaker_property(case: dict, fits: dict) -> tuple[bool, str]:
    """Our final objective is at most the authors' and within the spread of local minima."""
    ours = float(next(iter(fits.values())).objective_history_[-1])
    theirs = float(case["objective_history"][-1])
    held = ours <= theirs * (1 + 1e-9) and theirs <= OBJECTIVE_SPREAD * ours
    return held, (f"objective {ours:.4g} (ours) <= {theirs:.4g} (authors') <= "
                  f"{OBJECTIVE_SPREAD} x ours; sets not determined at gamma = 1e-5 (module doc)")
