"""Disk-cached seeded starts: K-means / spectral-clustering starts depend only on the data, a few
fixed parameters and the seed, so every setting of a grid that shares the seed shares them.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np

from ufsbench.cache import cached_call


def cached_seeded_call(func, X: np.ndarray, random_state, **params):
    """``func(X, random_state=random_state, **params)`` through ``cached_call`` when the seed is
    an int (the start is then a deterministic function of the key); computed directly for None
    or a ``RandomState`` (not reproducible, or state that a key cannot capture)."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return cached_call(func, X, random_state=int(random_state), **params)
    return func(X, random_state=random_state, **params)
