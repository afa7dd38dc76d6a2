"""Simplex projection of rows whose solution is sparse, sorting only each row's largest entries.

:func:`ufsbench.numerics.project_simplex_rows` sorts whole rows, O(N log N) each. In the S-steps
of the optimal-graph methods (SOGFS Eq. (18): s_i = argmin_{s in simplex} ||s + d_i / (2 alpha)||^2
over all N = n - 1 other samples) alpha is chosen so that a row keeps about k non-zeros, so only
the top few entries matter. Why the shortcut is exact: with u_1 >= u_2 >= ... the sorted row, the
threshold is theta = (sum_{j<=rho} u_j - 1) / rho, rho the last j with u_j > (sum_{i<=j} u_i - 1) / j,
and that condition holds exactly for j = 1..rho (Held et al. 1974; Duchi et al. 2008). So if
within the t largest entries it already fails at some j <= t, rho and theta computed from those t
entries are those of the whole row; otherwise t is doubled for that row. Cost O(N) per row
(``argpartition``) plus O(t log t). Import by module path.
"""

from __future__ import annotations

import numpy as np

#: First window: the t largest entries of each row (doubled for rows whose support is larger).
FIRST_WINDOW = 16


def _threshold_from_top(top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(theta, rho) of the simplex projection computed from each row's t largest entries."""
    t = top.shape[1]
    U = -np.sort(-top, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    with np.errstate(invalid="ignore"):      # -inf entries: -inf - (-inf) = nan, not > 0
        cond = U - css / np.arange(1, t + 1) > 0
    rho = t - 1 - np.argmax(cond[:, ::-1], axis=1)
    return css[np.arange(top.shape[0]), rho] / (rho + 1), rho


def project_simplex_rows_sparse(V: np.ndarray, first_window: int = FIRST_WINDOW) -> np.ndarray:
    """Same result as ``project_simplex_rows(V)`` (up to round-off), faster when rows are sparse.

    Rows whose support reaches the window are redone with a doubled window, up to the full row.
    Entries equal to -inf are excluded (projected to 0), e.g. a diagonal that must stay empty;
    every row needs at least one finite entry.
    """
    V = np.atleast_2d(np.asarray(V, dtype=float))
    n, N = V.shape
    theta = np.empty(n)
    todo, t = np.arange(n), min(max(1, int(first_window)), N)
    while todo.size:
        rows = V if todo.size == n else V[todo]
        # The t largest values of each row (partition: values only; theta depends on the
        # multiset of the window's values, which _threshold_from_top sorts).
        top = rows if t >= N else np.partition(rows, N - t, axis=1)[:, N - t:]
        th, rho = _threshold_from_top(top)
        done = (rho < t - 1) | (t >= N)      # the condition failed inside the window: exact
        theta[todo[done]] = th[done]
        todo, t = todo[~done], min(2 * t, N)
    out = V - theta[:, None]
    return np.maximum(out, 0.0, out=out)
