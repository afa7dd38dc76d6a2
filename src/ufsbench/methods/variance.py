"""Maximum variance (MaxVar): the cheapest unsupervised filter, a baseline every method must beat."""

from ufsbench.methods.base import UFSSelector, register


@register("variance")
class MaxVariance(UFSSelector):
    """The m features of largest variance (population variance of each column of X as given).

    No model and no parameter of its own: a feature's score is its variance, so on raw data
    (where the informative features are often the high-variance ones) it is a strong baseline,
    and after z-scoring every feature ties. Ties are ordered by feature index.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)).
    n_clusters : int, default 2
        Unused (the selection needs no cluster count).
    random_state : int, RandomState instance or None, default None
        Unused: the scores are deterministic and ties are ordered by feature index.
    """

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state

    def _fit(self, X):
        self.scores_ = X.var(axis=0)
