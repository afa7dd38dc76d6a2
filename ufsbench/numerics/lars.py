"""LARS-lasso on the implicit Gram X^T X + ridge I, never formed (O(n d) memory).

:func:`lasso_lars_ridge_path` traces the same path as
``sklearn.linear_model.lars_path_gram(X.T @ y, X.T @ X + ridge * I, n_samples=n,
method="lasso", max_iter=max_iter)`` -- the lasso path of the ridge-augmented design
[X; sqrt(ridge) I] (Efron, Hastie, Johnstone & Tibshirani 2004, "Least Angle Regression", with the
lasso modification of their §3.1) -- but touches the Gram only through what LARS needs:

* the correlations of the inactive variables with the equiangular direction,
  G[I, A] w = X_I^T (X_A w) (the ridge adds nothing off the diagonal): one X^T u product, O(n d);
* the new row of the active Gram for the Cholesky update, X_A^T x_j, and its diagonal
  ||x_j||^2 + ridge: O(n |A|);
* for a dropped variable, its correlation Xy_j - x_j^T (X a) - ridge a_j: O(n |A|).

So a path step costs O(n d + |A|^2) time instead of scikit-learn's O(|A| d) on a d x d Gram that
must first be formed (O(n d^2) time, 8 d^2 bytes, copied once per call). It pays off when d > n;
for d <= n the explicit Gram is the cheaper form (one n d^2 product, then O(|A| d) per step).

The step logic mirrors scikit-learn's ``_lars_path_solver`` (version 1.9) statement by statement,
so that the *same* path is traced, not merely an equivalent one: the same permuted order of the
inactive correlations (ties in the argmax resolve alike), the incremental update of the
correlations, the rounding of the direction correlations to 15 decimals, the ``tiny32`` guards, the
Cholesky insert (with ``max(sqrt(|c - v|), eps)`` pivots) and Givens delete, the "drop for good"
of a degenerate regressor, the stop on an increasing alpha and on alpha <= float32 eps. Only
round-off differs (dot products in another order), so supports agree and coefficients agree to
round-off except where a decision of the path is itself a round-off tie (two correlations or two
step lengths equal to ~1e-15), which data do not produce short of duplicated columns. Two
deliberate departures, both outside what scikit-learn can run: only ``alpha_min = 0`` (no
interpolation at the end, which for alpha_min = 0 never happens), and a tie of two variables
leaving at the same step drops both consistently (scikit-learn's bookkeeping breaks there).

Several paths on the same X (MCFS: one per spectral eigenvector) run in lockstep
(:func:`lasso_lars_ridge_paths`): each path keeps its own state (correlations in its own
permuted order, Cholesky factor, the rows of its active variables), and each round computes X^T u
for the directions u of all running paths at once -- one GEMM per round from 4 paths on, one
gemv per path below (measured: see ``_GEMM_MIN_PATHS``) -- from which every path gathers its
inactive correlations in its permuted order. X itself is shared and never permuted. The O(d)
passes of a step (argmax, rounding, the two step-length minima, the correlation update) run in
length-d scratch arrays, the minima by an exact two-pass bit-pattern trick (``_min_pos``); the
Cholesky factor lives in a buffer LAPACK ``trtrs`` reads in place (no O(|A|^2) copy per solve)
and is downdated by scikit-learn's compiled Givens sweep. Round-off differs from the
session-start loop and between a path traced alone and in a batch of 4 or more (other BLAS
kernels), so coefficients agree to round-off amplified by the path, with the same active sets
at every step short of a round-off tie: on the small-n microarray and image sets at |A| ~ 300
with ridge 1e-3 the path is ill-conditioned enough that a mere change of gemv kernel moves
coefficients by up to ~1e-4 relative. A path's arithmetic does not depend on when the other
paths of its batch stop, and buffers grow with the active set, never sized from ``max_iter``:
a smaller ``max_iter`` or ``stop_nnz`` gives the first steps of a longer run bit for bit (MCFS
serves every feature count from the longest path).

The path is returned sparsely (the active indices and their coefficients per step), not as the
dense (steps x d) array scikit-learn returns (97 MB at d = 10000 and 1220 steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg.lapack import dpotrs as _potrs, dtrtrs as _trtrs

_TINY32 = np.finfo(np.float32).tiny
_EQUALITY_TOL = np.finfo(np.float32).eps
_COV_PRECISION = np.finfo(np.float64).precision   # 15: the decimals corr_eq_dir is rounded to
_MAX_FLOAT = np.finfo(np.float64).max
#: From this many paths on, X^T U is one GEMM per round; with fewer, one gemv per path (the
#: choice is made once per call, so a path's arithmetic never depends on when the others
#: stop). Measured in the path loop (one core shared with another job, n = 100-102, d = 6000-
#: 10000): ten paths, one GEMM per round ~0.85x the ten gemvs; two paths, a 2-row GEMM ~1.6x
#: the two gemvs (OpenBLAS packs X for its GEMM kernel, and X stays in the 32 MB L3 so a gemv
#: is not bound by memory bandwidth).
_GEMM_MIN_PATHS = 4
#: The GEMM runs in blocks of this many features (columns of X), whose packed copy stays in
#: cache (measured: a 10-row product ~0.75-1x the unblocked one, 2-4 rows ~0.5-0.8x). The
#: blocks are the same in every round, and here their entries equal the unblocked product's.
_GEMM_BLOCK = 2048


@dataclass
class SparseLarsPath:
    """A LARS path stored sparsely: step s has coefficients ``coefs[s]`` on ``active[s]``.

    Step 0 is the zero vector. ``alphas[s]`` is scikit-learn's alpha (max |correlation| / n_samples)
    at step s.
    """

    n_features: int
    alphas: np.ndarray
    active: list
    coefs: list

    def __len__(self) -> int:
        return len(self.coefs)

    @classmethod
    def from_dense(cls, alphas: np.ndarray, path: np.ndarray) -> "SparseLarsPath":
        """The sparse form of a dense (n_features, n_steps) path (scikit-learn's output)."""
        active = [np.flatnonzero(path[:, s]) for s in range(path.shape[1])]
        return cls(n_features=path.shape[0], alphas=np.asarray(alphas), active=active,
                   coefs=[path[a, s] for s, a in enumerate(active)])

    def nnz(self) -> np.ndarray:
        """Number of non-zero coefficients at every step (exact zeros excluded)."""
        return np.array([np.count_nonzero(c) for c in self.coefs], dtype=int)

    def coef(self, step: int) -> np.ndarray:
        """The dense coefficient vector (n_features,) at one step."""
        out = np.zeros(self.n_features)
        out[self.active[step]] = self.coefs[step]
        return out

    def dense(self) -> np.ndarray:
        """The whole path as scikit-learn returns it: (n_features, n_steps)."""
        out = np.zeros((self.n_features, len(self)))
        for s, (a, c) in enumerate(zip(self.active, self.coefs)):
            out[a, s] = c
        return out


def _min_pos(x: np.ndarray, work: np.ndarray | None = None) -> float:
    """Smallest strictly positive entry, or the largest float (scikit-learn's ``min_pos``).

    Exact, in two passes without a mask: the bit patterns of the positive doubles, read as
    unsigned 64-bit integers, order as the doubles do, and minus 1 (wrapping) they all lie below
    those of +0.0 (2^64 - 1) and of the negative doubles and -0.0 (>= 2^63 - 1, sign bit set);
    positive NaNs lie above +inf. So the entry with the smallest pattern minus 1 is the smallest
    positive one if any positive entry exists, and is otherwise not > 0. (Boolean compress +
    min, as before, took ~5x longer at d = 10^4.) ``work``: an optional uint64 scratch array of
    x's shape.
    """
    if not x.size:
        return _MAX_FLOAT
    bits = np.subtract(x.view(np.uint64), np.uint64(1), out=work)
    best = x[int(np.argmin(bits))]
    return float(best) if best > 0 else _MAX_FLOAT


def _cholesky_delete(L: np.ndarray, k: int) -> None:
    """Remove row/column k from the lower Cholesky factor L (m x m view) in place.

    Same Givens sweep as scikit-learn's ``arrayfuncs.cholesky_delete``: the rows below k move up
    one, then rotations on column pairs (i, i+1) restore the lower-triangular form with a
    non-negative diagonal. The valid factor afterwards is ``L[:m-1, :m-1]``. Any memory layout;
    the path itself calls scikit-learn's compiled sweep when it is importable (one Python-level
    loop iteration per row otherwise).
    """
    m = L.shape[0]
    L[k:m - 1, :] = L[k + 1:m, :]
    for i in range(k, m - 1):
        a, b = float(L[i, i]), float(L[i, i + 1])
        r = math.hypot(a, b)
        c, s = (1.0, 0.0) if r == 0.0 else (a / r, b / r)
        L[i, i] = r
        L[i, i + 1] = 0.0
        if i + 1 < m - 1:
            x = L[i + 1:m - 1, i].copy()
            y = L[i + 1:m - 1, i + 1]
            L[i + 1:m - 1, i] = c * x + s * y
            L[i + 1:m - 1, i + 1] = c * y - s * x


try:   # scikit-learn's Cython Givens sweep (what lars_path_gram runs): C-ordered rows
    from sklearn.utils.arrayfuncs import cholesky_delete as _compiled_cholesky_delete
except ImportError:   # pragma: no cover - a scikit-learn without it
    _compiled_cholesky_delete = _cholesky_delete


class _Cholesky:
    """The lower Cholesky factor L of the active Gram, in a C-ordered buffer.

    Its memory is L^T = U in Fortran order with the buffer's leading dimension, so LAPACK
    ``trtrs`` reads the leading k x k block in place (``potrs`` / ``solve_triangular`` on a slice
    copied O(k^2) per call), and scikit-learn's compiled Givens sweep deletes in place. The
    buffer grows by doubling with the active set only -- never sized from ``max_iter`` -- so
    paths run with different ``max_iter`` do bit-identical arithmetic on their common prefix.
    """

    def __init__(self, n_features: int):
        self.limit = max(n_features, 1)
        self.L = np.empty((min(self.limit, 64),) * 2)

    def reserve(self, size: int) -> None:
        cap = self.L.shape[0]
        if size > cap:
            grown = np.empty((min(self.limit, max(2 * cap, size)),) * 2)
            grown[:cap, :cap] = self.L
            self.L = grown

    def _upper(self, k: int) -> np.ndarray:
        return self.L.T[:, :k]          # U = L^T, Fortran-contiguous (cap, k): no copy

    def forward(self, k: int, b: np.ndarray) -> np.ndarray:
        """L_k^{-1} b for the leading k x k block (the new row of an insert)."""
        x, info = _trtrs(self._upper(k), b, lower=0, trans=1)
        return x if info == 0 else linalg.solve_triangular(
            self.L[:k, :k], b, lower=True, check_finite=False)   # raises on a zero pivot

    def solve(self, k: int, b: np.ndarray) -> np.ndarray:
        """(L_k L_k^T)^{-1} b: potrs as two triangular solves with U = L^T in place."""
        x, info = _trtrs(self._upper(k), b, lower=0, trans=1)
        if info == 0:
            x, info = _trtrs(self._upper(k), x, lower=0, trans=0)
        if info != 0:   # an exactly zero pivot: potrs' inf/nan, handled by the caller
            x, _ = _potrs(np.array(self.L[:k, :k]), b, lower=True)
        return x

    def delete(self, m: int, k: int) -> None:
        """Remove row/column k of the leading m x m factor."""
        _compiled_cholesky_delete(self.L[:m, :m], k)


class _Scratch:
    """Length-d work arrays for the O(d) passes of a step (no allocation per step)."""

    def __init__(self, d: int):
        self.num, self.den, self.corr = np.empty(d), np.empty(d), np.empty(d)
        self.bits = np.empty(d, dtype=np.uint64)

    def min_pos_ratio(self, num_op, C, Cov, den_op, AA, corr) -> float:
        """min_pos(num_op(C, Cov) / (den_op(AA, corr) + tiny32)) in the scratch arrays."""
        size = Cov.size
        num, den = num_op(C, Cov, out=self.num[:size]), den_op(AA, corr, out=self.den[:size])
        den += _TINY32
        return _min_pos(np.divide(num, den, out=num), self.bits[:size])


def lasso_lars_ridge_path(X: np.ndarray, Xy: np.ndarray, ridge: float = 0.0, *,
                          n_samples: int | None = None, max_iter: int = 500,
                          eps: float = np.finfo(float).eps,
                          stop_nnz: int | None = None) -> SparseLarsPath:
    """The LARS-lasso path for the Gram X^T X + ridge I and correlations Xy, Gram never formed.

    Equivalent to ``lars_path_gram(Xy, X.T @ X + ridge * np.eye(d), n_samples=n_samples,
    method="lasso", max_iter=max_iter, eps=eps)`` up to round-off (see the module docstring);
    ``Xy`` is normally ``X.T @ y``. ``n_samples`` (default: rows of X) only scales the alphas and
    the stopping threshold alpha <= float32 eps, as in scikit-learn. ``max_iter`` only truncates:
    the path with a smaller ``max_iter`` is a prefix of this one, bit for bit. ``stop_nnz``
    (not in scikit-learn) ends the path at the first step with at least that many non-zero
    coefficients (the cardinality stop of Efron et al.'s and Cai's ``lars.m``); it truncates
    the same way: the path is the prefix of the unstopped one up to that step.

    The single-column case of :func:`lasso_lars_ridge_paths`.
    """
    d = np.shape(X)[1]
    if np.size(Xy) != d or np.ndim(Xy) > 2 or (np.ndim(Xy) == 2 and np.shape(Xy)[1] != 1):
        raise ValueError(f"Xy has shape {np.shape(Xy)}, expected ({d},)")
    return lasso_lars_ridge_paths(X, np.reshape(Xy, (d, 1)), ridge, n_samples=n_samples,
                                  max_iter=max_iter, eps=eps, stop_nnz=stop_nnz)[0]


def lasso_lars_ridge_paths(X: np.ndarray, XY: np.ndarray, ridge: float = 0.0, *,
                           n_samples: int | None = None, max_iter: int = 500,
                           eps: float = np.finfo(float).eps,
                           stop_nnz: int | None = None) -> list[SparseLarsPath]:
    """The LARS-lasso paths of the columns of XY (d, c) on the same Gram X^T X + ridge I.

    Path k is :func:`lasso_lars_ridge_path` ``(X, XY[:, k], ...)`` (same options, applied to
    every path), traced in lockstep with the others: each round computes the correlations of
    all features with the equiangular directions of all running paths -- from
    ``_GEMM_MIN_PATHS`` paths on in one product U X (c x n times n x d), so X is read once
    per round instead of once per path -- and every path gathers its inactive correlations from
    its row in its own permuted order. Round-off: with 4 or more paths, path k's products are
    GEMM entries, not gemv ones, so the paths equal the one-at-a-time ones up to round-off (same
    supports); the GEMM keeps the rows of the paths that have stopped (their entries unused), so
    that path k does not depend on when the other paths stop: a smaller ``max_iter`` or
    ``stop_nnz`` still gives a bitwise prefix of every path (tests check it).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    XY = np.asarray(XY, dtype=np.float64)
    if XY.ndim != 2 or XY.shape[0] != d:
        raise ValueError(f"XY has shape {XY.shape}, expected ({d}, c)")
    c = XY.shape[1]
    n_samples = n if n_samples is None else n_samples
    diag_gram = np.einsum("ij,ij->j", X, X) + ridge     # by feature id
    paths = [_LarsPath(XY[:, k].copy(), n, d, max_iter) for k in range(c)]
    scratch = _Scratch(d)
    U = np.zeros((c, n))       # row k: path k's direction u = X_A w
    products = np.empty((c, d))
    alive = list(range(c))
    while alive:
        alive = [k for k in alive
                 if paths[k].direction(X, diag_gram, n_samples, max_iter, eps, scratch, U[k])]
        if not alive:
            break
        if c < _GEMM_MIN_PATHS:
            full = [U[k] @ X for k in alive]
        else:   # X^T u for all running paths in one product, X read once per round
            # Always all c rows, a stopped path's row left as it was: a GEMM entry's round-off
            # may depend on its row's place in the kernel's tiles (OpenBLAS: it does), so
            # compacting the rows would make a path depend on when the others stop.
            for start in range(0, d, _GEMM_BLOCK):
                block = slice(start, start + _GEMM_BLOCK)
                np.matmul(U, X[:, block], out=products[:, block])
            full = products[alive]
        for row in full:
            np.around(row, decimals=_COV_PRECISION, out=row)   # elementwise: before the gather
        alive = [k for k, row in zip(alive, full)
                 if paths[k].step(row, X, scratch, ridge, stop_nnz)]
    return [p.result(d) for p in paths]


class _LarsPath:
    """The state of one LARS-lasso path between steps (scikit-learn's local variables).

    ``cov[n_active:]`` is scikit-learn's Cov (inactive correlations, in the permuted order of
    ``indices[n_active:]``); ``rows`` holds X_A^T (the columns of the active variables, in
    active order, a buffer growing with the active set) for u = X_A w and the Cholesky rows.
    """

    def __init__(self, xy: np.ndarray, n: int, d: int, max_iter: int):
        self.xy = xy
        self.cov = xy.copy()
        self.indices = np.arange(d)
        self.sign_active = np.empty(d, dtype=np.int8)
        self.coef = np.zeros(0)          # coefficients of the active set, in active order
        self.chol = _Cholesky(d)
        self.rows = np.empty((min(max(d, 1), 64), n))
        self.alphas = np.zeros(min(max_iter, d) + 1)
        self.steps_active: list = [np.zeros(0, dtype=np.intp)]
        self.steps_coef: list = [np.zeros(0)]
        self.n_iter, self.n_active = 0, 0
        self.drop = False
        self.idx = np.zeros(0, dtype=np.intp)
        self.least_squares, self.AA = np.zeros(0), 1.0

    def _active_rows(self, size: int) -> np.ndarray:
        """The X_A^T buffer with room for ``size`` rows (grows by doubling, like the factor)."""
        cap = self.rows.shape[0]
        if size > cap:
            grown = np.empty((min(self.chol.limit, max(2 * cap, size)), self.rows.shape[1]))
            grown[:cap] = self.rows
            self.rows = grown
        return self.rows

    def direction(self, X, diag_gram, n_samples, max_iter, eps, scratch, u_out) -> bool:
        """The top of a step: the stops, the insert, w; u = X_A w into ``u_out``. False: ended."""
        d = X.shape[1]
        cov, indices, sign_active, chol = self.cov, self.indices, self.sign_active, self.chol
        while True:
            n_active, n_iter = self.n_active, self.n_iter
            Cov = cov[n_active:]
            if Cov.size:
                C_idx = int(np.argmax(np.abs(Cov, out=scratch.num[:Cov.size])))
                C_ = Cov[C_idx]
                C = np.fabs(C_)
            else:
                C = 0.0
            if n_iter >= self.alphas.size:
                self.alphas = np.concatenate([self.alphas, np.zeros(self.alphas.size)])
            alphas = self.alphas
            alphas[n_iter] = C / n_samples
            if alphas[n_iter] <= _EQUALITY_TOL:          # alpha_min = 0: stop, no interpolation
                return False
            if n_iter >= max_iter or n_active >= d:
                return False

            if not self.drop:
                # Append x_j to the Cholesky factor of the active Gram.
                sign_active[n_active] = np.sign(C_)
                nn = C_idx + n_active
                cov[nn], cov[n_active] = cov[n_active], cov[nn]
                indices[nn], indices[n_active] = indices[n_active], indices[nn]
                XA = self._active_rows(n_active + 1)
                XA[n_active] = X[:, indices[n_active]]
                c = diag_gram[indices[n_active]]
                chol.reserve(n_active + 1)
                L = chol.L
                if n_active:
                    L[n_active, :n_active] = chol.forward(n_active, XA[:n_active] @ XA[n_active])
                v = np.dot(L[n_active, :n_active], L[n_active, :n_active])
                diag = max(np.sqrt(np.abs(c - v)), eps)
                L[n_active, n_active] = diag
                if diag < 1e-7:
                    # Degenerate regressor: scikit-learn's "drop for good" (its bookkeeping
                    # kept: the correlations swap back, indices do not).
                    cov[n_active] = 0
                    cov[nn], cov[n_active] = cov[n_active], cov[nn]
                    continue
                self.n_active = n_active = n_active + 1
                self.coef = np.append(self.coef, 0.0)

            if n_iter > 0 and alphas[n_iter - 1] < alphas[n_iter]:
                return False   # alpha increasing: round-off dominates the remaining correlation

            self.C = C
            self.least_squares, self.AA = _equiangular(chol, n_active, sign_active, eps)
            np.matmul(self.least_squares, self.rows[:n_active], out=u_out)
            return True

    def step(self, xu: np.ndarray, X, scratch: "_Scratch", ridge: float, stop_nnz) -> bool:
        """The rest of the step, given xu = X^T u (by feature id) rounded to 15 decimals.

        False: the path has ended."""
        n_active, C, AA, least_squares = self.n_active, self.C, self.AA, self.least_squares
        # Correlations of the inactive variables with the equiangular direction, permuted.
        Cov = self.cov[n_active:]
        corr_eq_dir = np.take(xu, self.indices[n_active:], out=scratch.corr[:Cov.size])

        g1 = scratch.min_pos_ratio(np.subtract, C, Cov, np.subtract, AA, corr_eq_dir)
        g2 = scratch.min_pos_ratio(np.add, C, Cov, np.add, AA, corr_eq_dir)
        gamma_ = min(g1, g2, C / AA)

        drop = False
        z = -self.coef / (least_squares + _TINY32)
        z_pos = _min_pos(z)
        if z_pos < gamma_:
            idx = np.where(z == z_pos)[0][::-1]
            self.sign_active[idx] = -self.sign_active[idx]
            gamma_ = z_pos
            drop = True
            self.idx = idx
        self.drop = drop

        self.n_iter += 1
        self.coef = coef = self.coef + gamma_ * least_squares
        self.steps_active.append(self.indices[:n_active].copy())
        self.steps_coef.append(coef.copy())
        if stop_nnz is not None and np.count_nonzero(coef) >= stop_nnz:
            return False
        Cov -= np.multiply(corr_eq_dir, gamma_, out=corr_eq_dir)

        if drop:
            self.n_active, self.coef = _drop(self.idx, n_active, coef, self.chol, self.indices,
                                             self.rows, self.cov, self.xy, ridge,
                                             self.sign_active)
        return True

    def result(self, d: int) -> SparseLarsPath:
        return SparseLarsPath(n_features=d, alphas=self.alphas[: self.n_iter + 1].copy(),
                              active=self.steps_active, coefs=self.steps_coef)


def _equiangular(chol: _Cholesky, n_active: int, sign_active: np.ndarray,
                 eps: float) -> tuple[np.ndarray, float]:
    """w = AA G_AA^{-1} s and AA = (s^T G_AA^{-1} s)^{-1/2} (Efron et al. 2004, eq. 2.5)."""
    signs = sign_active[:n_active].astype(np.float64)
    least_squares = chol.solve(n_active, signs)
    if least_squares.size == 1 and least_squares == 0:
        least_squares[...] = 1
        return least_squares, 1.0
    AA = 1.0 / np.sqrt(np.sum(least_squares * sign_active[:n_active]))
    if not np.isfinite(AA):
        # scikit-learn's regularisation of a singular active Gram: growing diagonal jitter.
        i = 0
        L_ = chol.L[:n_active, :n_active].copy()
        while not np.isfinite(AA):
            L_.flat[:: n_active + 1] += (2**i) * eps
            least_squares, _ = _potrs(L_, sign_active[:n_active], lower=True)
            tmp = max(np.sum(least_squares * sign_active[:n_active]), eps)
            AA = 1.0 / np.sqrt(tmp)
            i += 1
    least_squares *= AA
    return least_squares, AA


def _drop(idx, n_active, coef, chol, indices, XA, cov, Xy0, ridge, sign_active):
    """Remove the variables at active positions ``idx`` (descending); (n_active, coef) after.

    The dropped variables move to the front of the inactive block (for one drop this is
    scikit-learn's bubbling of indices[ii] to position n_active), their correlations recomputed
    from the fit: Xy_j - x_j^T (X a) - ridge a_j. ``XA``: the rows x_j^T of the active
    variables in active order, reordered alike.
    """
    fitted = coef @ XA[:n_active]
    m = n_active
    for ii in idx:
        chol.delete(n_active, int(ii))
        n_active -= 1
    keep = np.ones(m, dtype=bool)
    keep[idx] = False
    order = np.concatenate([np.flatnonzero(keep), idx])
    indices[:m] = indices[:m][order]
    XA[:m] = XA[:m][order]
    drop_ids = indices[n_active:m]
    cov[n_active:m] = Xy0[drop_ids] - XA[n_active:m] @ fitted - ridge * coef[idx]
    sign_active[:n_active] = sign_active[:m][keep]
    return n_active, coef[keep]
