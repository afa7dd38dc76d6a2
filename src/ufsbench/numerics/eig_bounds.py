"""Cheap certificates that a symmetric matrix has no eigenvalue above a bound.

An iteration that only needs the eigenpairs above a threshold (a rank-thresholding step such
as DGUFS's Theorem 2) can skip an O(n^3) eigensolver whenever one of these O(n^2) bounds shows
that there are none: Gershgorin's discs (:func:`eigenvalues_certainly_at_most`), the
Collatz-Wielandt bound for nonnegative matrices (:func:`perron_root_at_most`), and an upper
bound of a wide factor's spectral norm for a low-rank term left out (:func:`spectral_norm_bound`).
Each carries a relative margin of 1e-10 (1e-8 for the norm) against round-off, so that a
certificate never hides an eigenvalue LAPACK would find above the bound.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np

#: Power steps :func:`perron_root_at_most` spends before leaving the question to LAPACK.
PERRON_STEPS = 12


def eigenvalues_certainly_at_most(As: np.ndarray, bound: float, extra: float = 0.0) -> bool:
    """Whether Gershgorin's discs of the symmetric As, widened by ``extra`` (a bound on the
    spectral norm of a term left out of As), put every eigenvalue at or below ``bound``.

    The margin (1e-10 of the largest absolute row sum) is far above both the round-off of these
    sums and LAPACK's eigenvalue error (~n eps ||As||), so that LAPACK's subset is empty too.
    O(n^2); in DGUFS's first ADMM iterations A is often close to a multiple of I far below the
    threshold (COIL20: 43 of 50 iterations at the default), where it replaces an O(n^3) solve.
    """
    radius = np.abs(As).sum(axis=1)
    diag = np.diagonal(As)
    upper = diag + (radius - np.abs(diag))
    return bool(upper.max() + 1e-10 * radius.max() + extra <= bound)


def spectral_norm_bound(B: np.ndarray) -> float:
    """An upper bound of ||B||_2 for a wide B (m x n, m <= n): sqrt of the largest eigenvalue
    of B B^T, enlarged by 1e-8 relative against its round-off; inf when B is not finite."""
    if B.size == 0:
        return 0.0
    gram = B @ B.T
    if not np.all(np.isfinite(gram)):
        return np.inf                   # diverged iterates: no bound (the solve reports it)
    return float(np.sqrt(max(np.linalg.eigvalsh(gram)[-1], 0.0))) * (1.0 + 1e-8)


def perron_root_at_most(B: np.ndarray, bound: float,
                        x0: np.ndarray | None = None) -> tuple[bool, np.ndarray | None]:
    """Whether the Collatz-Wielandt bound shows lambda_max(B) <= ``bound`` for a symmetric
    nonnegative B, and the positive vector to start the next call from.

    With s = min_i B_ii, C = B - s I is nonnegative too and lambda_max(B) = s + rho(C); for
    every x > 0, rho(C) <= max_i (C x)_i / x_i, which tends to rho(C) as x tends to the Perron
    vector. The shift removes a near-multiple of I (B ~ c I + small), so that the power steps
    converge fast. x starts from ``x0`` (e.g. the previous call's vector; None: all ones) and
    takes up to :data:`PERRON_STEPS` power steps with C (O(n^2) each), kept positive; a margin
    of 1e-10 of max_i (B x)_i / x_i covers the round-off of the products.

    Returns
    -------
    certain : bool
        True when the bound is shown; False leaves the question open.
    x : ndarray or None
        The last vector tried (``x0`` itself when the power steps broke down).
    """
    shift = float(np.diagonal(B).min())
    x = x0 if x0 is not None else np.ones(B.shape[0])
    for _ in range(PERRON_STEPS):
        Bx = B @ x
        y = Bx - shift * x
        ratio = float(np.max(y / x))
        if shift + ratio + 1e-10 * float(np.max(Bx / x)) <= bound:
            return True, x
        top = float(y.max())
        if not top > 0.0 or not np.isfinite(top):
            return False, x0
        x = np.maximum(y / top, 1e-12)
    return False, x
