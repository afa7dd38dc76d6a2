"""Feature standardisation shared by the selectors that preprocess X (import by module path)."""

from __future__ import annotations

import numpy as np


def zscore(X: np.ndarray) -> np.ndarray:
    """Each feature (column) to zero mean and unit population variance (ddof=0).

    A constant feature has no scale to divide by and becomes an all-zero column.
    """
    centred = X - X.mean(axis=0)
    std = centred.std(axis=0)
    return centred / np.where(std > 0, std, 1.0)


def center_unit_norm(X: np.ndarray) -> np.ndarray:
    """Each feature (column) to zero mean and unit l2 norm (the Nie group's preprocessing).

    A constant feature has no norm to divide by and becomes an all-zero column.
    """
    centred = X - X.mean(axis=0)
    norms = np.linalg.norm(centred, axis=0)
    return centred / np.where(norms > 0, norms, 1.0)
