"""The evaluation protocol's cost: 20 seeded K-means runs (random init, at most 100 iterations)
with ACC and NMI, on the m best columns of seeded synthetic data, as the runner scores every
(setting, feature count). Over the papers' full grids this is about a third of a reproduction.
"""

from __future__ import annotations

N_SAMPLES = 1000
N_FEATURES = 300
N_CLASSES = 10


class ClusteringScores:
    params = [[10, 50, 300]]
    param_names = ["m"]
    timeout = 300.0

    def setup(self, m: int):
        from ufsbench.datasets import make_synthetic

        data = make_synthetic(n_samples=N_SAMPLES, n_features=N_FEATURES, n_informative=10,
                              n_clusters=N_CLASSES, random_state=0)
        self.X, self.y = data.X[:, :m].copy(), data.y

    def time_clustering_scores(self, m: int):
        from ufsbench.evaluation import clustering_scores

        clustering_scores(self.X, self.y, N_CLASSES, n_runs=20, random_state=0)
