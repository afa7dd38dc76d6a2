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


def fits_cache_off_cold_warm(method: str, X, cache_dir, monkeypatch, **params):
    """``method`` fitted on X with the disk cache off, then cold and warm in ``cache_dir``:
    (off, cold, warm) -- for tests that a cached step reproduces the direct fit bit for bit."""
    from ufsbench.methods import make_selector

    monkeypatch.setenv("UFSBENCH_CACHE", "off")
    off = make_selector(method, **params).fit(X)
    monkeypatch.setenv("UFSBENCH_CACHE", str(cache_dir))
    cold = make_selector(method, **params).fit(X)
    warm = make_selector(method, **params).fit(X)
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
