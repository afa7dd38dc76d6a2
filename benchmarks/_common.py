"""Shared pieces of the benchmarks: the method list, typical settings, seeded data, selectors.

Not a benchmark module (asv finds nothing here: no ``time_`` / ``peakmem_`` / ``track_`` names).
"""

from __future__ import annotations

import os
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

from ufsbench.methods import available_methods, make_selector
from ufsbench.report import method_config

#: Every registered method, as ``make_selector`` names them.
METHODS = available_methods()
#: Features each benchmark fit selects (capped at d).
N_SELECT = 50
#: Clusters of the synthetic data (and the selectors' ``n_clusters``).
N_CLUSTERS = 3


def typical_setting(method: str) -> dict:
    """The method config's fixed ``params`` plus its label-free ``default``: what ``ufsbench run``
    fits for the label-free rule."""
    cfg = method_config(method)
    return dict(cfg.get("params") or {}, **(cfg.get("default") or {}))


def shape(text: str) -> tuple[int, int]:
    """``"100x200"`` -> (100, 200)."""
    n, d = (int(v) for v in text.lower().split("x"))
    return n, d


@lru_cache(maxsize=8)
def synthetic(n: int, d: int, n_clusters: int = N_CLUSTERS) -> np.ndarray:
    """Seeded Gaussian clusters on 10 planted informative features among d (X only)."""
    from ufsbench.datasets import make_synthetic

    return make_synthetic(n_samples=n, n_features=d, n_informative=10, n_clusters=n_clusters,
                          random_state=0).X


def selector(method: str, X: np.ndarray, n_clusters: int, n_features: int = N_SELECT,
             **overrides):
    """An unfitted selector at the method's typical setting (plus overrides), seeded, selecting
    ``n_features`` (capped at d)."""
    return make_selector(method, n_features_to_select=min(n_features, X.shape[1]),
                         n_clusters=n_clusters, random_state=0,
                         **dict(typical_setting(method), **overrides))


def fit_quietly(sel, X: np.ndarray):
    """``sel.fit(X)`` with its warnings (an iteration cap reached, ...) kept off the output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sel.fit(X)


def real_data_dir() -> Path:
    """``$UFSBENCH_DATA``; raises NotImplementedError (asv: skipped) when it is not set."""
    env = os.environ.get("UFSBENCH_DATA")
    if not env or not Path(env).expanduser().is_dir():
        raise NotImplementedError("real-data benchmark: set UFSBENCH_DATA to the data directory")
    return Path(env).expanduser()


@lru_cache(maxsize=4)
def real_data(name: str, n_samples: int | None = None) -> tuple[np.ndarray, int]:
    """(X, number of classes) of a registered data set from ``$UFSBENCH_DATA`` (no download),
    optionally a seeded subsample of ``n_samples`` rows; skipped when the file is absent."""
    from ufsbench.datasets import load_dataset
    from ufsbench.errors import DataError

    try:
        data = load_dataset(name, data_dir=real_data_dir(), download=False)
    except DataError as exc:
        raise NotImplementedError(f"data set {name!r} not available: {exc}") from exc
    X, y = data.X, data.y
    if n_samples is not None and n_samples < X.shape[0]:
        keep = np.sort(np.random.default_rng(0).choice(X.shape[0], n_samples, replace=False))
        X, y = X[keep], y[keep]
    return X, int(np.unique(y).size)
