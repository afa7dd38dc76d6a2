"""In-place forms of proximal operators, for ADMM loops that keep their n x d iterates in
preallocated buffers (EUFS's E-step). Same arithmetic as ``ufsbench.numerics.prox``, so the
results are bitwise those of the allocating forms.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np

from ufsbench.numerics.sparsity import row_norms


def row_shrink_(Q: np.ndarray, tau: float) -> np.ndarray:
    """``prox.row_shrink(Q, tau)`` written into Q (returned): q_i <- max(0, 1 - tau/||q_i||) q_i."""
    norms = row_norms(Q)
    scale = np.zeros_like(norms)
    keep = norms > tau
    scale[keep] = 1.0 - tau / norms[keep]
    Q *= scale[:, None]
    return Q
