"""Optional: side by side with scikit-feature (the ``skfeature-chappers`` fork) for Laplacian
Score, MCFS, UDFS and NDFS, on the same seeded synthetic data with the closest parameters each
implementation allows.

Skipped (asv: ``n/a``) unless ``skfeature`` is importable: ``pip install -e ".[bench]"``.

Matched parameters:

* graph: k = 5 Euclidean kNN, binary weights (scikit-feature's ``construct_W`` with
  ``metric="euclidean", weight_mode="binary"``; its kNN lists include the sample itself, ours
  do not). Our NDFS keeps its own heat-kernel normalised Laplacian (it has no binary option).
* LS, MCFS: ``weight="binary"``; MCFS with the number of features m for LARS.
* UDFS: gamma = 1 (scikit-feature uses one gamma for the l2,1 weight and the local ridge: ours
  gets gamma = lam = 1).
* NDFS: alpha = beta = 1, gamma = 1e8; scikit-feature starts from K-means++ (seeded through
  NumPy's global seed), ours from spectral clustering: the starts differ.

Each side's time includes its own graph. scikit-feature's UDFS and NDFS run up to 1000
iterations of a d x d eigendecomposition / inverse, so d stays small here (100 x 300, 5 clusters,
10 planted informative features). ``track_planted_in_top10`` counts the planted features among a
side's 10 best (which side is right where the selections differ); ``Agreement.track_jaccard``
is the overlap of the two sides' top-50 sets.
"""

from __future__ import annotations

import importlib.util

import numpy as np

METHODS = ["ls", "mcfs", "udfs", "ndfs"]
SIDES = ["ufsbench", "scikit-feature"]
SHAPE = (100, 300)
N_CLUSTERS = 5
N_SELECT = 50
PLANTED = 10
OURS = {"ls": {"k": 5, "weight": "binary"}, "mcfs": {"k": 5, "weight": "binary"},
        "udfs": {"k": 5, "gamma": 1.0, "lam": 1.0},
        "ndfs": {"k": 5, "alpha": 1.0, "beta": 1.0, "gamma": 1e8}}


def require_skfeature() -> None:
    """Raise NotImplementedError (asv: skipped) when scikit-feature is not importable."""
    if importlib.util.find_spec("skfeature") is None:
        raise NotImplementedError("scikit-feature (skfeature) is not importable: "
                                  "pip install -e \".[bench]\" installs skfeature-chappers")


def planted_data():
    from ufsbench.datasets import make_synthetic

    return make_synthetic(n_samples=SHAPE[0], n_features=SHAPE[1], n_informative=PLANTED,
                          n_clusters=N_CLUSTERS, random_state=0)


def skfeature_top(method: str, X: np.ndarray, c: int, m: int, top: int) -> set:
    """The ``top`` best features of scikit-feature's fit selecting m (its own graph built
    inside; its index lists are best first)."""
    from skfeature.function.similarity_based.lap_score import lap_score
    from skfeature.function.sparse_learning_based.MCFS import mcfs
    from skfeature.function.sparse_learning_based.NDFS import ndfs
    from skfeature.function.sparse_learning_based.UDFS import udfs
    from skfeature.utility.construct_W import construct_W

    np.random.seed(0)  # noqa: NPY002 - scikit-feature's NDFS draws its K-means++ start from the global state
    if method == "udfs":
        order = udfs(X, gamma=1.0, k=5, n_clusters=c, mode="index")
    else:
        graph = construct_W(X, metric="euclidean", neighbor_mode="knn", weight_mode="binary",
                            k=5)
        if method == "ls":
            order = lap_score(X, W=graph, mode="index")
        elif method == "mcfs":
            order = mcfs(X, n_selected_features=m, W=graph, n_clusters=c, mode="index")
        else:
            order = ndfs(X, W=graph, alpha=1.0, beta=1.0, gamma=1e8, n_clusters=c, mode="index")
    return set(np.asarray(order)[:min(m, top)].tolist())


def ufsbench_top(method: str, X: np.ndarray, c: int, m: int, top: int) -> set:
    """The ``top`` best features of our fit selecting m, at the matched parameters."""
    import warnings

    from ufsbench.methods import make_selector

    sel = make_selector(method, n_features_to_select=m, n_clusters=c, random_state=0,
                        **OURS[method])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel.fit(X)
    return set(sel.top_features(min(m, top)).tolist())


TOP = {"ufsbench": ufsbench_top, "scikit-feature": skfeature_top}


class SideBySide:
    params = [METHODS, SIDES]
    param_names = ["method", "side"]
    timeout = 300.0

    def setup(self, method: str, side: str):
        require_skfeature()
        self.data = planted_data()
        if side == "scikit-feature":  # its imports are not fit time
            import skfeature.function.sparse_learning_based.NDFS  # noqa: F401

    def time_fit(self, method: str, side: str):
        TOP[side](method, self.data.X, N_CLUSTERS, N_SELECT, N_SELECT)

    def track_planted_in_top10(self, method: str, side: str):
        """Planted informative features among the side's 10 best (of 10)."""
        top = TOP[side](method, self.data.X, N_CLUSTERS, N_SELECT, PLANTED)
        return len(top & set(self.data.informative.tolist()))

    track_planted_in_top10.unit = "features"


class Agreement:
    params = [METHODS]
    param_names = ["method"]
    timeout = 300.0

    def setup(self, method: str):
        require_skfeature()
        self.data = planted_data()

    def track_jaccard(self, method: str):
        """|ours & theirs| / |ours | theirs| of the two top-50 sets."""
        ours, theirs = (TOP[side](method, self.data.X, N_CLUSTERS, N_SELECT, N_SELECT)
                        for side in SIDES)
        return len(ours & theirs) / len(ours | theirs)

    track_jaccard.unit = "Jaccard"
