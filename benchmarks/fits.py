"""Fit time and peak memory of every registered method on seeded synthetic data.

Each method at its typical setting (config ``params`` + label-free ``default``), 50 features,
3 clusters, ``random_state=0``, disk cache off, on three shapes: small (100 x 200), wide
(d >> n: 100 x 2000) and tall (n >> d: 1000 x 50). ``peakmem_fit`` is asv's peak resident memory
of the process during the benchmark (imports and data included), so compare it between commits,
not between methods.
"""

from __future__ import annotations

from . import _common

#: (n x d) of the synthetic data: small, wide, tall.
SHAPES = ["100x200", "100x2000", "1000x50"]


class Fit:
    params = [_common.METHODS, SHAPES]
    param_names = ["method", "n x d"]
    timeout = 300.0

    def setup(self, method: str, shape: str):
        self.X = _common.synthetic(*_common.shape(shape))
        self.selector = _common.selector(method, self.X, _common.N_CLUSTERS)

    def time_fit(self, method: str, shape: str):
        _common.fit_quietly(self.selector, self.X)

    def peakmem_fit(self, method: str, shape: str):
        _common.fit_quietly(self.selector, self.X)
