"""Helpers for tests that use the real data sets (importable from any test directory)."""

from __future__ import annotations

import os
from pathlib import Path

#: Where the shared data sets sit beside a clone of the repository (CI's layout).
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def data_dir() -> Path | None:
    """$UFSBENCH_DATA when it is a directory, else ../shared/datasets beside the clone, else None."""
    env = os.environ.get("UFSBENCH_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    return SHARED_DATA if SHARED_DATA.is_dir() else None


def requires_data(*names: str):
    """pytest mark: skip unless the named data set files are present."""
    import pytest

    directory = data_dir()
    missing = [n for n in names if directory is None or not (directory / f"{n}.mat").is_file()]
    return pytest.mark.skipif(bool(missing), reason=f"data set file(s) {missing} not present")


def fits_cache_off_cold_warm(method: str, X, cache_dir, **params):
    """``method`` fitted on X with ``memory=None``, then cold and warm with ``memory=cache_dir``:
    (off, cold, warm) -- for tests that a cached step reproduces the direct fit bit for bit."""
    from ufsbench.methods import make_selector

    off = make_selector(method, **params).fit(X)
    cold = make_selector(method, memory=str(cache_dir), **params).fit(X)
    warm = make_selector(method, memory=str(cache_dir), **params).fit(X)
    return off, cold, warm


def assert_fit_matches_reference(selector, scores, history, top: int = 6,
                                 rtol: float = 1e-9) -> None:
    """A fit equals a reference computation (e.g. a frozen copy of earlier code): objective
    history and scores within ``rtol``, the same ``top`` features."""
    import numpy as np

    np.testing.assert_allclose(selector.objective_history_, history, rtol=rtol)
    np.testing.assert_allclose(selector.scores_, scores, rtol=rtol, atol=1e-12 * scores.max())
    assert np.array_equal(np.sort(np.argsort(-selector.scores_, kind="stable")[:top]),
                          np.sort(np.argsort(-scores, kind="stable")[:top]))


def assert_same_partition(a, b) -> None:
    """Two label vectors describe the same partition of the samples, whatever the label names.

    Cluster numbering is arbitrary: two computations that agree up to round-off may still name
    the same clusters differently (e.g. K-means started from eigenvectors whose signs or order
    differ with the BLAS kernel). The pairs (a_i, b_i) map labels one to one exactly when the
    contingency table has one non-zero cell per row and per column.
    """
    import numpy as np

    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    assert a.shape == b.shape, f"label vectors of different lengths: {a.shape} vs {b.shape}"
    pairs = np.unique(np.column_stack([a, b]), axis=0)
    n_a, n_b = len(np.unique(a)), len(np.unique(b))
    assert len(pairs) == n_a == n_b, (
        f"not the same partition: {n_a} and {n_b} clusters, {len(pairs)} distinct label pairs")


def record_calls(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name`` by a wrapper that records each call's (args, kwargs) and then calls
    the original; returns the list the calls are appended to."""
    real = getattr(owner, name)
    calls = []

    def recording(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return calls
