"""Seeded synthetic data with planted informative features: the ground truth for selector tests."""

from __future__ import annotations

import hashlib

import numpy as np

from ufsbench.datasets.base import Dataset


def make_synthetic(n_samples: int = 300, n_features: int = 100, n_informative: int = 10,
                   n_clusters: int = 3, separation=3.0, noise_scale: float = 1.0,
                   random_state: int = 0) -> Dataset:
    """Gaussian clusters living on ``n_informative`` planted features among pure-noise features.

    Each cluster has a centre on the informative features (levels evenly spaced in [-separation,
    separation], permuted per feature) and the same N(0, 1) spread there; every other feature is
    N(0, noise_scale^2) noise independent of the clusters. ``separation`` is one number, or one
    per informative feature (in the order of ``informative``): features that separate the
    clusters unequally well. Informative features sit at random (seeded) positions, not at the
    front, so that an index bug cannot pass for a correct selection. Cluster sizes are as equal
    as possible.
    """
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % n_clusters
    rng.shuffle(y)
    informative = np.sort(rng.choice(n_features, size=n_informative, replace=False))
    separations = np.broadcast_to(np.asarray(separation, dtype=float), (n_informative,))
    # Every informative column spreads the cluster centres over [-s, s] in its own random
    # order, so each of them separates the clusters (none is constant across them).
    centres = np.column_stack([rng.permutation(np.linspace(-s, s, n_clusters))
                               for s in separations])
    X = noise_scale * rng.standard_normal((n_samples, n_features))
    X[:, informative] = centres[y] + rng.standard_normal((n_samples, n_informative))
    if np.ndim(separation):
        separation = tuple(float(s) for s in separations)
    params = (n_samples, n_features, n_informative, n_clusters, separation, noise_scale,
              random_state)
    checksum = "synthetic:" + hashlib.sha256(repr(params).encode()).hexdigest()[:16]
    return Dataset(name="synthetic", X=X, y=y, checksum=checksum, informative=informative,
                   meta={"params": dict(zip(("n_samples", "n_features", "n_informative",
                                                 "n_clusters", "separation", "noise_scale",
                                                 "random_state"), params))})
