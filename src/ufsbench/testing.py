"""Helpers for tests that use the real data sets (importable from any test directory)."""

from __future__ import annotations

import contextlib
import os
import signal
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


def fit_blas_threads(selector):
    """A context manager under which a computation rounds as ``selector``'s fits do: BLAS on one
    thread for a method declaring ``single_threaded_blas``, else the caller's limit (for
    reference computations compared with a fit to round-off)."""
    from contextlib import nullcontext

    from ufsbench.numerics.lanes import one_blas_thread

    return one_blas_thread() if selector.single_threaded_blas else nullcontext()


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


def peak_traced_bytes(call):
    """(``call()``'s result, the peak of Python-traced memory while it ran, in bytes): numpy's
    arrays are traced, so a test can show that a fit never holds an n x n (or d x d) array."""
    import tracemalloc

    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


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


def forced_lanes(monkeypatch, n_lanes: int) -> set:
    """Make every lane user (``ufsbench.numerics.lanes``, ``sparse_gram``'s products, from any
    size on) take ``n_lanes`` lanes whatever BLAS is allowed; returns the set that collects the
    lane numbers that ran, so a test can show the work was really split. (Which threads run
    the lanes is the thread pool's choice: a lane that finished early may lend its thread.)"""
    from ufsbench.numerics import lanes, sparse_gram

    monkeypatch.setattr(lanes, "blas_thread_limit", lambda: n_lanes)
    monkeypatch.setattr(sparse_gram, "blas_thread_limit", lambda: n_lanes)
    monkeypatch.setattr(sparse_gram, "LANES_MIN_MULTIPLY_ADDS", 0)
    seen: set = set()
    run_lane = lanes.BlockLanes._run_lane

    def recording(self, step, lane):
        seen.add(lane)
        return run_lane(self, step, lane)

    monkeypatch.setattr(lanes.BlockLanes, "_run_lane", recording)
    return seen


def check_selector(selector, X, cache_dir=None) -> None:
    """The contract every selector keeps, checked from what its class declares; a new method
    gets these checks for free (tests/test_selector_contract.py runs them on every registered
    selector). ``selector`` is unfitted, with the parameters to check; X has no constant column.
    ``cache_dir``: a scratch directory for the ``memory`` check (skipped when None).

    * the exact count: ``n_features_to_select`` distinct features (all of them for
      ``selection_kind == "all"``), and ``transform`` keeps those columns;
    * ranking methods: one score per feature, none NaN, and ``top_features(m)`` is the support;
    * determinism: a clone fitted with the same ``random_state`` selects the same features
      (and scores them the same);
    * labels are never used: ``fit(X, y)`` selects what ``fit(X)`` selects;
    * ``one_fit_serves_counts``: ``top_features(h)`` equals a refit at h;
    * ``random_state_only_in_labels``: ``labels_for_seed(s)`` equals a fresh fit's labels;
    * ``memory``: a fit caching at ``cache_dir`` (cold, then warm) selects what ``memory=None``
      selects, scores included.
    """
    import numpy as np
    from sklearn.base import clone

    name = type(selector).__name__
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    fitted = clone(selector).fit(X)
    support = fitted.get_support(indices=True)
    m = d if fitted.selection_kind == "all" else fitted.n_features_to_select_
    assert len(support) == m == len(set(support)), f"{name}: {len(support)} features, not {m}"
    assert fitted.transform(X).shape == (n, m), f"{name}: transform keeps other columns"

    def same_fit(other, what: str) -> None:
        np.testing.assert_array_equal(other.get_support(indices=True), support,
                                      err_msg=f"{name}: {what} selects other features")
        if fitted.selection_kind == "ranking":
            np.testing.assert_array_equal(other.scores_, fitted.scores_,
                                          err_msg=f"{name}: {what} scores differently")

    if fitted.selection_kind == "ranking":
        assert fitted.scores_.shape == (d,) and not np.isnan(fitted.scores_).any(), \
            f"{name}: scores_ must hold one number (not NaN) per feature"
        np.testing.assert_array_equal(fitted.top_features(m), support)
    same_fit(clone(selector).fit(X), "a second fit with the same random_state")
    labels = np.random.default_rng(0).integers(0, 3, size=n)
    same_fit(clone(selector).fit(X, labels), "a fit given labels")
    if fitted.selection_kind == "subset" and fitted.one_fit_serves_counts:
        for h in sorted({1, max(1, m // 2)}):
            refit = clone(selector).set_params(n_features_to_select=h).fit(X)
            np.testing.assert_array_equal(fitted.top_features(h),
                                          refit.get_support(indices=True),
                                          err_msg=f"{name}: top_features({h}) is not the refit")
    if fitted.random_state_only_in_labels and getattr(fitted, "labels_", None) is not None:
        for seed in (1, 2):
            fresh = clone(selector).set_params(random_state=seed).fit(X)
            np.testing.assert_array_equal(fitted.labels_for_seed(seed), fresh.labels_,
                                          err_msg=f"{name}: labels_for_seed({seed})")
    if cache_dir is not None and "memory" in selector.get_params():
        for when in ("cold", "warm"):
            cached = clone(selector).set_params(memory=str(cache_dir)).fit(X)
            same_fit(cached, f"a {when} fit with memory={cache_dir}")


@contextlib.contextmanager
def reaped(proc):
    """A started command (``subprocess.Popen``) that is killed on leaving the block if it still
    runs: a failed assertion while waiting for it leaves no process behind."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def interrupt(proc, timeout: float = 30.0) -> tuple[str, str]:
    """Ctrl-C (SIGINT) to a running command, then its (stdout, stderr) once it exits."""
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=timeout)
