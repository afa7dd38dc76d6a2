"""Limited-memory BFGS with Armijo backtracking, optionally projected onto x >= 0.

The block solver of Qian's RUFS code (``UpdateW`` / ``UpdateG`` / ``UpdateF`` of ``RUFS.m``),
written for any smooth objective over arrays of any shape (inner products are taken over all
entries). Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: Constants of Qian's block solvers (RUFS.m): Armijo parameter, backtracking factor, number of
#: stored pairs and the first step's inverse-Hessian scale.
ARMIJO, BACKTRACK, LBFGS_MEMORY, LBFGS_H0 = 0.2, 0.5, 10, 1.0
#: Backtracking halvings before t = 2^-1100 underflows to 0 (Qian's loop ends there too, at
#: x_t = x, unless the direction is not finite; then it would not end).
MAX_BACKTRACKS = 1100


def two_loop(grad: np.ndarray, pairs: list) -> np.ndarray:
    """H grad by the L-BFGS two-loop recursion (Nocedal & Wright, Algorithm 7.4).

    Parameters
    ----------
    grad : ndarray
        The gradient (any shape).
    pairs : list of (s, y, rho)
        The stored steps s, gradient changes y and rho = 1 / (y . s), oldest first.

    Returns
    -------
    ndarray
        H grad with H0 = (s.y / y.y) I of the newest pair (``LBFGS_H0`` I when there is none).
    """
    q, a = grad.copy(), []
    for s, y, rho in reversed(pairs):
        a.append(rho * np.vdot(s, q))
        q -= a[-1] * y
    if pairs:
        s, y, _ = pairs[-1]
        q *= np.vdot(s, y) / np.vdot(y, y)
    else:
        q *= LBFGS_H0
    for (s, y, rho), a_i in zip(pairs, reversed(a)):
        q += (a_i - rho * np.vdot(y, q)) * s
    return q


def lbfgs_block(x: np.ndarray, value: Callable[[np.ndarray], tuple[float, Any]],
                gradient: Callable[[np.ndarray, Any], np.ndarray], *, projected: bool,
                ftol: float, gtol: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Minimise f from x by L-BFGS with Armijo backtracking from t = 1, over x >= 0 when
    ``projected``.

    Each round: stop when the gradient (projected: its entries where g < 0 or x > 0) has norm
    <= ``gtol``; the direction is the two-loop H g (:func:`two_loop`; projected: restricted the
    same way, or the projected gradient itself when that is not a descent direction);
    backtrack t by ``BACKTRACK`` until f(x_t) <= f(x) + ``ARMIJO`` g.(x_t - x) (unconstrained:
    ``ARMIJO`` t g.p); stop WITHOUT taking the step when |f(x_t) - f(x)| < ``ftol``. At most
    ``LBFGS_MEMORY`` pairs are kept. A direction along which no step is accepted before t
    underflows (non-finite values) ends the minimisation at x.

    Parameters
    ----------
    x : ndarray
        The start (any shape; non-negative when ``projected``).
    value : callable
        ``value(x) -> (f, state)``: the objective and whatever the gradient reuses.
    gradient : callable
        ``gradient(x, state) -> g``, the gradient at x (same shape as x).
    projected : bool
        Keep x >= 0 (each trial point is clipped at 0).
    ftol : float
        Stop when a step would change f by less than this.
    gtol : float or None, default None
        Stop when the (projected) gradient's norm is at most this (None: no such test).

    Returns
    -------
    x : ndarray
        The last accepted point.
    pg : ndarray
        The (projected) gradient at x.
    """
    f, state = value(x)
    g = gradient(x, state)
    pairs: list = []
    while True:
        pg = np.where((g < 0) | (x > 0), g, 0.0) if projected else g
        if gtol is not None and np.linalg.norm(pg) <= gtol:
            break
        r = two_loop(g, pairs)
        if projected:
            r = np.where((r < 0) | (x > 0), r, 0.0)
            p = -pg if np.vdot(r, g) <= 0 else -r
        else:
            p = -r
        slope = np.vdot(g, p)
        t = 1.0
        for _ in range(MAX_BACKTRACKS):
            x_t = np.maximum(x + t * p, 0.0) if projected else x + t * p
            f_t, state_t = value(x_t)
            gain = np.vdot(g, x_t - x) if projected else t * slope
            if f_t <= f + ARMIJO * gain:
                break
            t *= BACKTRACK
        else:              # t has underflowed (a non-finite direction): no step, the block ends
            f_t, state_t, x_t = f, state, x
        if abs(f_t - f) < ftol:
            break
        x_prev, g_prev = x, g
        f, x, state = f_t, x_t, state_t
        g = gradient(x, state)
        s, y = x - x_prev, g - g_prev
        with np.errstate(divide="ignore"):
            rho = np.float64(1.0) / np.vdot(y, s)
        pairs = (pairs + [(s, y, rho)])[-LBFGS_MEMORY:]
    return x, pg
