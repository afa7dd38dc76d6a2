"""All features: the "no selection" baseline row of every paper's table."""

from ufsbench.methods.base import UFSSelector, register


@register("allfeatures")
class AllFeatures(UFSSelector):
    """Keeps every feature; the papers' "All Features" / "Baseline" row (K-means on raw X).

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Unused: every feature is kept.
    n_clusters : int, default 2
        Unused (the selection needs no cluster count).
    random_state : int, RandomState instance or None, default None
        Unused.
    """

    selection_kind = "all"

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state

    def _fit(self, X):
        pass

    def _resolve_n_features(self, n_features):
        return n_features
