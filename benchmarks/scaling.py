"""Scaling: fit time and peak memory along one axis of the data, the other held fixed.

* ``ScalingN``: n = 250 ... 1000 samples at d = 50 for DGUFS (dense n x n ADMM) and SOGFS
  (n x n graph and its components), whose cost grows with n;
* ``ScalingD``: d = 1000 ... 16000 features at n = 100 for the methods that work in n x n form
  when d >> n: their time should grow at most linearly in d and no d x d array be formed
  (a peak growing with d^2 shows one).

Seeded synthetic data (10 planted informative features, 3 clusters), typical settings, 50
features. ``asv compare`` / ``asv continuous`` show each point; the slope between points is the
empirical exponent.
"""

from __future__ import annotations

from . import _common

N_SIZES = [250, 500, 1000]
N_FIXED_D = 50
D_SIZES = [1000, 4000, 16000]
D_FIXED_N = 100
#: Methods with an n x n (push-through / Woodbury / factored) form for d >> n.
D_METHODS = ["ls", "mcfs", "udfs", "ndfs", "rsfs", "spufs", "sf2sog", "scfs", "dgufs"]


class ScalingN:
    params = [["dgufs", "sogfs"], N_SIZES]
    param_names = ["method", "n"]
    timeout = 600.0

    def setup(self, method: str, n: int):
        self.X = _common.synthetic(n, N_FIXED_D)
        self.selector = _common.selector(method, self.X, _common.N_CLUSTERS)

    def time_fit(self, method: str, n: int):
        _common.fit_quietly(self.selector, self.X)

    def peakmem_fit(self, method: str, n: int):
        _common.fit_quietly(self.selector, self.X)


class ScalingD:
    params = [D_METHODS, D_SIZES]
    param_names = ["method", "d"]
    timeout = 600.0

    def setup(self, method: str, d: int):
        self.X = _common.synthetic(D_FIXED_N, d)
        self.selector = _common.selector(method, self.X, _common.N_CLUSTERS)

    def time_fit(self, method: str, d: int):
        _common.fit_quietly(self.selector, self.X)

    def peakmem_fit(self, method: str, d: int):
        _common.fit_quietly(self.selector, self.X)
