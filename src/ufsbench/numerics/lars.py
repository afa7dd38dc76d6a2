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

Per-step bookkeeping is kept off the O(d) Python level: the rows of X^T are held in the path's
permuted order (swapped with ``indices``, O(n) per swap), so X_I^T u is one contiguous gemv with
no gather and X_A is its leading block; the O(d) passes of a step (argmax, rounding, the two
step-length minima, the correlation update) run in length-d scratch arrays; the Cholesky factor
lives in a buffer LAPACK ``trtrs`` reads in place (no O(|A|^2) copy per solve) and is downdated by
scikit-learn's compiled Givens sweep. Round-off differs from a loop that gathers X_I per step
(other BLAS kernels), so the two give coefficients that agree to round-off amplified by the path
(~1e-9 absolute at |A| ~ 300 with ridge 1e-3, the same order as scikit-learn's own path against
ours), with the same active sets at every step. Buffers grow with the active set, never sized
from ``max_iter``: a smaller ``max_iter`` gives the first steps of a longer run bit for bit (MCFS
serves every feature count from the longest path).

The path is returned sparsely (the active indices and their coefficients per step), not as the
dense (steps x d) array scikit-learn returns (97 MB at d = 10000 and 1220 steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg.lapack import dpotrs as _potrs
from scipy.linalg.lapack import dtrtrs as _trtrs

_TINY32 = float(np.finfo(np.float32).tiny)   # exact as a Python float: no scalar casts
_EQUALITY_TOL = np.finfo(np.float32).eps
_COV_PRECISION = np.finfo(np.float64).precision   # 15: the decimals corr_eq_dir is rounded to
_MAX_FLOAT = np.finfo(np.float64).max
_ZERO = np.zeros(1)
_ONE_BITS = np.uint64(1)
#: A coefficient at most this fraction of its step's largest counts as zero in
#: :func:`cardinality`: a lasso drop step's length is where the dropping coefficient crosses
#: zero, and round-off leaves an exact zero or a remainder of <= 7e-17 of the step's largest
#: depending on the BLAS kernel (measured on lymphoma, pix10p, prostate_ge, allaml, orl, jaffe:
#: ~10 % of 10,073 drops leave one). Coefficients that stay on the path are >= 2e-8 of it there.
ROUNDOFF_ZERO = 1e-12


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
    def from_dense(cls, alphas: np.ndarray, path: np.ndarray) -> SparseLarsPath:
        """The sparse form of a dense (n_features, n_steps) path (scikit-learn's output)."""
        active = [np.flatnonzero(path[:, s]) for s in range(path.shape[1])]
        return cls(n_features=path.shape[0], alphas=np.asarray(alphas), active=active,
                   coefs=[path[a, s] for s, a in enumerate(active)])

    def nnz(self) -> np.ndarray:
        """:func:`cardinality` at every step: the active-set size after the step's drops."""
        return np.array([cardinality(c) for c in self.coefs], dtype=int)

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


def cardinality(coef: np.ndarray) -> int:
    """Non-zero coefficients of one path step, a drop's round-off remainder counted as zero.

    This is the active-set size after the step (Efron et al.'s and Cai's ``lars.m`` count,
    ``vars``, decremented at a drop step), independent of whether round-off left the dropped
    coefficient at exactly 0 (see ``ROUNDOFF_ZERO``).
    """
    magnitude = np.abs(coef)
    if not magnitude.size:
        return 0
    return int(np.count_nonzero(magnitude > ROUNDOFF_ZERO * magnitude.max()))


def _min_pos(x: np.ndarray, work: np.ndarray | None = None) -> float:
    """Smallest strictly positive entry, or the largest float (scikit-learn's ``min_pos``).

    Exact, in two passes and without a mask: the bit patterns of the positive doubles, read as
    unsigned 64-bit integers, order as the doubles do; minus 1 (wrapping) they all lie below
    those of +0.0 (2^64 - 1) and of the negative doubles and -0.0 (>= 2^63 - 1, sign bit set),
    and positive NaNs lie above +inf. So the entry with the smallest pattern minus 1 is the
    smallest positive one if any entry is positive, and is otherwise not > 0. (A boolean
    compress + min took ~5x longer at d = 10^4; LARS calls this twice per step.)
    ``work``: an optional uint64 scratch array of x's shape.
    """
    if not x.size:
        return _MAX_FLOAT
    bits = np.subtract(x.view(np.uint64), _ONE_BITS, out=work)
    best = x[bits.argmin()]
    return float(best) if best > 0 else _MAX_FLOAT


def _swap_rows(A: np.ndarray, i: int, j: int) -> None:
    """Exchange rows i and j of A in place (basic indexing: no fancy-index gather)."""
    if i != j:
        row = A[i].copy()
        A[i] = A[j]
        A[j] = row


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
    """Work arrays for the O(d) passes of a step (no allocation per step)."""

    def __init__(self, d: int):
        self.num, self.den = np.empty(2 * d), np.empty(2 * d)
        self.corr = np.empty(d)
        self.bits = np.empty(2 * d, dtype=np.uint64)

    def step_bound(self, C: float, Cov: np.ndarray, AA: float, corr: np.ndarray) -> float:
        """min(g1, g2) of scikit-learn's step: g1 = min_pos((C - Cov) / (AA - corr + tiny32)),
        g2 = min_pos((C + Cov) / (AA + corr + tiny32)), as one min_pos over both ratios
        side by side (the same quotients; the smaller of the two minima is the minimum of the
        union)."""
        size = Cov.size
        num, den = self.num[:2 * size], self.den[:2 * size]
        np.subtract(C, Cov, out=num[:size])
        np.add(C, Cov, out=num[size:])
        np.subtract(AA, corr, out=den[:size])
        np.add(AA, corr, out=den[size:])
        den += _TINY32
        ratio = np.divide(num, den, out=num)
        bound = _min_pos(ratio, self.bits[:2 * size])
        if bound == np.inf:   # min_pos gives inf, but the largest float where none is > 0
            return min(_min_pos(ratio[:size]), _min_pos(ratio[size:]))
        return bound


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
    coefficients (:func:`cardinality`: the cardinality stop of Efron et al.'s and Cai's
    ``lars.m``); it truncates the same way: the path is the prefix of the unstopped one up to
    that step.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    n_samples = n if n_samples is None else n_samples
    Xy0 = np.asarray(Xy, dtype=np.float64).ravel()
    if Xy0.shape != (d,):
        raise ValueError(f"Xy has shape {np.shape(Xy)}, expected ({d},)")
    # Rows = features, kept in the order of ``indices`` (swapped with it, O(n) per swap): the
    # first n_active rows are X_A^T in active order, the rest the inactive block in the order of
    # the correlations, so X_I^T u is one contiguous product without a gather.
    XT = np.array(X.T, order="F")     # column-major: X_I^T u is a BLAS gemv "N" (faster here)
    diag_gram = np.einsum("ij,ij->i", XT, XT) + ridge     # by feature id
    # cov[n_active:] is scikit-learn's Cov (inactive correlations, permuted order).
    cov = Xy0.copy()
    scratch = _Scratch(d)
    chol = _Cholesky(d)

    alphas = np.zeros(min(max_iter, d) + 1)
    steps_active: list = [np.zeros(0, dtype=np.intp)]
    steps_coef: list = [np.zeros(0)]
    n_iter, n_active = 0, 0
    indices = np.arange(d)
    sign_active = np.empty(d, dtype=np.int8)
    coef = np.zeros(0)          # coefficients of the active set, in active order
    drop = False
    idx = np.zeros(0, dtype=np.intp)

    while True:
        Cov = cov[n_active:]
        if Cov.size:
            C_idx = int(np.abs(Cov, out=scratch.num[:Cov.size]).argmax())
            C_ = Cov[C_idx]
            C = np.fabs(C_)
        else:
            C = 0.0
        if n_iter >= alphas.size:
            alphas = np.concatenate([alphas, np.zeros(alphas.size)])
        alphas[n_iter] = C / n_samples
        if alphas[n_iter] <= _EQUALITY_TOL:          # alpha_min = 0: stop, no interpolation
            break
        if n_iter >= max_iter or n_active >= d:
            break

        if not drop:
            # Append x_j to the Cholesky factor of the active Gram.
            sign_active[n_active] = np.sign(C_)
            nn = C_idx + n_active
            cov[nn], cov[n_active] = cov[n_active], cov[nn]
            indices[nn], indices[n_active] = indices[n_active], indices[nn]
            _swap_rows(XT, n_active, nn)
            c = diag_gram[indices[n_active]]
            chol.reserve(n_active + 1)
            L = chol.L
            if n_active:
                L[n_active, :n_active] = chol.forward(n_active, XT[:n_active] @ XT[n_active])
            v = np.dot(L[n_active, :n_active], L[n_active, :n_active])
            diag = max(np.sqrt(np.abs(c - v)), eps)
            L[n_active, n_active] = diag
            if diag < 1e-7:
                # Degenerate regressor: scikit-learn's "drop for good" (its bookkeeping kept:
                # the correlations swap back, indices and rows of XT do not).
                cov[n_active] = 0
                cov[nn], cov[n_active] = cov[n_active], cov[nn]
                continue
            n_active += 1
            coef = np.concatenate((coef, _ZERO))

        if n_iter > 0 and alphas[n_iter - 1] < alphas[n_iter]:
            break   # alpha increasing: round-off dominates the remaining correlation

        least_squares, AA = _equiangular(chol, n_active, sign_active, eps)

        # Correlations of the inactive variables with the equiangular direction X_A w.
        Cov = cov[n_active:]
        u = least_squares @ XT[:n_active]
        corr_eq_dir = np.matmul(XT[n_active:], u, out=scratch.corr[:Cov.size])
        corr_eq_dir.round(decimals=_COV_PRECISION, out=corr_eq_dir)

        gamma_ = min(scratch.step_bound(C, Cov, AA, corr_eq_dir), C / AA)

        drop = False
        z = -coef / (least_squares + _TINY32)
        z_pos = _min_pos(z)
        if z_pos < gamma_:
            idx = np.where(z == z_pos)[0][::-1]
            sign_active[idx] = -sign_active[idx]
            gamma_ = z_pos
            drop = True

        n_iter += 1
        coef = coef + gamma_ * least_squares
        steps_active.append(indices[:n_active].copy())
        steps_coef.append(coef)          # a fresh array every step, never written in place
        # count_nonzero bounds the cardinality from above: the dearer count only near the stop.
        if (stop_nnz is not None and np.count_nonzero(coef) >= stop_nnz
                and cardinality(coef) >= stop_nnz):
            break
        Cov -= np.multiply(corr_eq_dir, gamma_, out=corr_eq_dir)

        if drop:
            n_active, coef = _drop(idx, n_active, coef, chol, indices, XT, cov, Xy0, ridge,
                                   sign_active)

    return SparseLarsPath(n_features=d, alphas=alphas[: n_iter + 1].copy(),
                          active=steps_active, coefs=steps_coef)


def _equiangular(chol: _Cholesky, n_active: int, sign_active: np.ndarray,
                 eps: float) -> tuple[np.ndarray, float]:
    """w = AA G_AA^{-1} s and AA = (s^T G_AA^{-1} s)^{-1/2} (Efron et al. 2004, eq. 2.5)."""
    signs = sign_active[:n_active].astype(np.float64)
    least_squares = chol.solve(n_active, signs)
    if least_squares.size == 1 and least_squares == 0:
        least_squares[...] = 1
        return least_squares, 1.0
    # The signs as float64 (exact): the same products as with the int8 signs, without the
    # mixed-type ufunc loop; the same sum (ndarray.sum is np.sum) and the correctly rounded
    # sqrt of math, without numpy's scalar overhead. A sum that is not > 0 gives AA = inf, as
    # numpy's sqrt (nan) or division (inf) did: the jitter below.
    total = float((least_squares * signs).sum())
    AA = 1.0 / math.sqrt(total) if total > 0 else math.inf
    if not math.isfinite(AA):
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


def _drop(idx, n_active, coef, chol, indices, XT, cov, Xy0, ridge, sign_active):
    """Remove the variables at active positions ``idx`` (descending); (n_active, coef) after.

    The dropped variables move to the front of the inactive block (for one drop this is
    scikit-learn's bubbling of indices[ii] to position n_active), their correlations recomputed
    from the fit: Xy_j - x_j^T (X a) - ridge a_j.
    """
    fitted = coef @ XT[:n_active]
    m = n_active
    for ii in idx:
        chol.delete(n_active, int(ii))
        n_active -= 1
    keep = np.ones(m, dtype=bool)
    keep[idx] = False
    order = np.concatenate([np.flatnonzero(keep), idx])
    indices[:m] = indices[:m][order]
    XT[:m] = XT[:m][order]
    drop_ids = indices[n_active:m]
    cov[n_active:m] = Xy0[drop_ids] - XT[n_active:m] @ fitted - ridge * coef[idx]
    sign_active[:n_active] = sign_active[:m][keep]
    return n_active, coef[keep]
