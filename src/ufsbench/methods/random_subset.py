"""Random feature subsets: the chance baseline a selection must beat to mean anything."""

from typing import ClassVar

import numpy as np
from sklearn.utils import check_random_state

from ufsbench.methods.base import UFSSelector, register


@register("random")
class RandomSubset(UFSSelector):
    """A uniformly random m-subset of the features, drawn from ``random_state``.

    The selection is itself a draw, so one subset says little: the runner evaluates a fresh
    subset per K-means run (``draws_per_run``), subset i and K-means run i both seeded from the
    run's seed + i, and a record's mean and std are over those (subset, K-means) pairs. A method
    whose cell is not above this row by more than the row's std does not beat chance there.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        m, the size of the subset (None: min(50, n_features)).
    n_clusters : int, default 2
        Unused (the selection needs no cluster count).
    random_state : int, RandomState instance or None, default None
        Seeds the draw of the subset.
    """

    selection_kind = "subset"
    draws_per_run: ClassVar[bool] = True

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state

    def _fit(self, X):
        d = X.shape[1]
        chosen = check_random_state(self.random_state).choice(d, self.n_features_to_select_,
                                                              replace=False)
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[chosen] = True
