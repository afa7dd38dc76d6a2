"""The asv (airspeed velocity) benchmark suite of ufsbench (configuration: ``asv.conf.json``).

Modules:

* ``fits``: ``time_fit`` / ``peakmem_fit`` of every registered method at its typical setting on
  seeded synthetic data of a few shapes (n x d);
* ``scaling``: fit time and peak memory along one axis: n for DGUFS and SOGFS (their n x n
  steps), d at fixed n for the methods with d >> n forms;
* ``sweep``: a small grid through the runner (fits, K-means evaluation, records in a store);
* ``real_data``: default fits on paper data sets and DGUFS/SOGFS on seeded USPS subsets (skipped
  unless ``$UFSBENCH_DATA`` is set);
* ``skfeature``: side by side with scikit-feature (skipped unless ``skfeature`` is importable);
* ``authors_octave``: the ``released`` presets against the authors' MATLAB code under GNU Octave
  (skipped unless ``octave`` is on PATH and ``$UFSBENCH_AUTHORS_CODE`` names their checkout).

``bench_default_fits.py`` is not an asv benchmark: a script printing one table of every method's
default fit on the paper data sets (seconds, iterations, convergence).

BLAS and OpenMP run one thread unless ``OPENBLAS_NUM_THREADS`` or ``OMP_NUM_THREADS`` say
otherwise, in every process asv starts: asv's runner has imported NumPy before this package, so
the limit is set through threadpoolctl on the libraries loaded here (NumPy's and SciPy's BLAS,
scikit-learn's OpenMP), and in the environment for the processes the benchmarks start.
"""

import os

# Underscored names: asv looks for benchmarks in every public name of the package's modules.
import numpy as _numpy  # noqa: F401  (loads the BLAS libraries the limit below applies to)
import scipy.linalg as _scipy_linalg  # noqa: F401
import sklearn.cluster as _sklearn_cluster  # noqa: F401  (OpenMP)
from threadpoolctl import threadpool_limits as _threadpool_limits

_threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "1"
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, _threads)
_threadpool_limits(limits=int(_threads))
