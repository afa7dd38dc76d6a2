"""Maximum variance (MaxVar): the cheapest unsupervised filter, a baseline every method must beat."""

from ufsbench.methods.base import UFSSelector, register


@register("variance")
class MaxVariance(UFSSelector):
    """The m features of largest variance (population variance of each column of X as given).

    No model and no parameter: a feature's score is its variance, so on raw data (where the
    informative features are often the high-variance ones) it is a strong baseline, and after
    z-scoring every feature ties. Ties are ordered by feature index.
    """

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state

    def _fit(self, X):
        self.scores_ = X.var(axis=0)
