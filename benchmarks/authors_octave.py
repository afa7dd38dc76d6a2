"""Optional: our ``released`` presets against the authors' MATLAB code under GNU Octave.

Skipped (asv: ``n/a``) unless ``octave`` is on PATH and ``$UFSBENCH_AUTHORS_CODE`` names a
checkout of the authors' code: AutoUFSTool (github.com/farhadabedinzadeh/AutoUFSTool; the
directory holding ``UFSs/``, or ``UFSs`` itself). Nothing of that code is part of ufsbench: it is
called where it lies. The one helper written here, at run time into a temporary directory, is
``randsample(n, k) = randperm(n, k)'`` for an Octave without the statistics package (UFSOL's
``litekmeans`` draws its starts with it); it sits at the end of the path, so a real one wins.

Both sides get the same data, written to a .mat file that Octave loads: seeded synthetic data
(100 x 200, 3 clusters, where most fits take milliseconds) and JAFFE (213 x 676, 10 classes;
from ``$UFSBENCH_DATA``, skipped where absent), the same settings, one BLAS thread (or what
``OPENBLAS_NUM_THREADS`` says, for both) and the same timing: one untimed call (Octave parses
the files, Python imports and warms up), then the best wall time of at least 3 calls, and of
as many more as fit in one second of calls (at most 1000: a fit of milliseconds is otherwise
timed by whichever 3 calls the system interrupted least), each including the method's own graph
and, on our side, building the selector with its preset. Octave's start-up is not timed. The
calls are those the shared reference outputs were made with (c = the data's clusters, m = 50,
SOGFS's projection round(d / 2)):

| method | authors' call (X is n x d) | ours |
|---|---|---|
| ls | ``constructW(X, options)`` (KNN, k = 5, HeatKernel) + ``LaplacianScore(X, W)`` | ``released`` |
| mcfs | ``MCFS_p(X, m, options)`` (k = 5, nUseEigenfunction = c) | ``released``, n_components = c |
| udfs | ``udfs(X, c)`` (the wrapper's k, gamma, lambda, 20 iterations) | ``released`` |
| dgufs | ``getS(X', 5, 1)`` + ``DGUFS(X', c, S, 1000, 0.5, m)`` | ``released``, alpha = 1000, beta = 0.5 |
| sogfs | ``SOGFS(X, 1, round(d / 2), c, 5)`` | ``released``, gamma = 1, n_components = round(d / 2) |
| ufsol | ``UFSwithOL(X', c, para)`` (p0 = 'sample', p1 = p2 = 1) | ``released``, alpha = beta = 1 |

``track_authors_seconds`` and ``track_ufsbench_seconds`` are the two times, ``track_speedup``
their ratio (authors / ours; the performance target at the ``released`` preset is >= 2).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from . import _common

SHAPE = (100, 200)
N_CLUSTERS = 3
N_SELECT = 50
REPEATS = 3
#: Further calls are timed until they add up to this many seconds (at most MAX_REPEATS in all).
MIN_TIMED_SECONDS = 1.0
MAX_REPEATS = 1000
OCTAVE_TIMEOUT = 900.0
#: The data both sides fit: seeded synthetic data, and a paper data set where it is present.
DATA = ["synthetic", "jaffe"]

#: method -> (folders of UFSs/ to put on the path, first = lowest priority; the Octave statement)
AUTHORS = {
    "ls": (["MCFS", "LS"], "options = []; options.NeighborMode = 'KNN'; options.k = 5; "
                           "options.WeightMode = 'HeatKernel'; W = constructW(X, options); "
                           "Y = LaplacianScore(X, W);"),
    "mcfs": (["MCFS"], "options = []; options.nUseEigenfunction = c; options.k = 5; "
                       "[FeaIndex, FeaNumCandi] = MCFS_p(X, m, options);"),
    "udfs": (["UDFS"], "ranking = udfs(X, c);"),
    "dgufs": (["DGUFS"], "S = getS(X', 5, 1); [Y, L, V, Label] = DGUFS(X', c, S, 1000, 0.5, m);"),
    "sogfs": (["SOGFS"], "ranking = SOGFS(X, 1, round(d / 2), c, 5);"),
    "ufsol": (["UFSoL"], "para = struct('p0', 'sample', 'p1', 1, 'p2', 1); "
                         "[W, V, feaIdx, valVec] = UFSwithOL(X', c, para);"),
}
#: Our side: the ``released`` preset plus the settings the authors' call passes.
OURS = {
    "ls": {"k": 5, "weight": "heat"},
    "mcfs": {"k": 5, "path_cardinality": N_SELECT},
    "udfs": {},
    "dgufs": {"alpha": 1000.0, "beta": 0.5, "graph": "knn_self", "k": 5},
    "sogfs": {"gamma": 1.0, "k": 5},
    "ufsol": {"alpha": 1.0, "beta": 1.0, "k": 5},
}

RANDSAMPLE_SHIM = "function y = randsample(n, k)\n  y = randperm(n, k)';\nend\n"
SCRIPT = """\
addpath('{shims}', '-end');
{paths}
ufsbench_data = load('{data}'); X = double(ufsbench_data.X); [n, d] = size(X); c = {c}; m = {m};
rand('state', 0); randn('state', 0);
{call}
ufsbench_best = Inf; ufsbench_total = 0; ufsbench_r = 0;
while ufsbench_r < {repeats} || (ufsbench_total < {min_seconds} && ufsbench_r < {max_repeats})
  rand('state', 0); randn('state', 0);
  ufsbench_t = tic;
  {call}
  ufsbench_s = toc(ufsbench_t);
  ufsbench_best = min(ufsbench_best, ufsbench_s); ufsbench_total += ufsbench_s; ufsbench_r += 1;
end
printf('UFSBENCH_SECONDS %.9g\\n', ufsbench_best);
"""


def our_settings(method: str, n_features: int, n_clusters: int) -> dict:
    """OURS[method] plus what depends on the data: MCFS's c eigenfunctions and SOGFS's
    projection of round(d / 2) columns (Octave's round: halves away from zero)."""
    settings = dict(OURS[method])
    if method == "mcfs":
        settings["n_components"] = n_clusters
    if method == "sogfs":
        settings["n_components"] = int(np.floor(n_features / 2 + 0.5))
    return settings


def data_case(name: str) -> tuple[np.ndarray, int]:
    """(X, clusters) of ``name`` in DATA; NotImplementedError when the data set is absent."""
    if name == "synthetic":
        return _common.synthetic(*SHAPE), N_CLUSTERS
    return _common.real_data(name)


def authors_root() -> Path | str:
    """The ``UFSs`` folder of the authors' checkout, or a reason to skip."""
    if shutil.which("octave") is None:
        return "octave is not on PATH"
    env = os.environ.get("UFSBENCH_AUTHORS_CODE")
    if not env:
        return "UFSBENCH_AUTHORS_CODE is not set (a checkout of farhadabedinzadeh/AutoUFSTool)"
    for candidate in (Path(env).expanduser() / "UFSs", Path(env).expanduser()):
        if (candidate / "LS" / "LaplacianScore.m").is_file():
            return candidate
    return f"UFSBENCH_AUTHORS_CODE={env} holds no UFSs/LS/LaplacianScore.m"


def octave_seconds(method: str, ufss: Path, data_file: Path, workdir: Path,
                   n_clusters: int) -> float:
    """Best wall seconds of the authors' calls on the data in ``data_file``, by the rule of
    ``best_of_calls`` (the script's loop)."""
    folders, call = AUTHORS[method]
    missing = [f for f in folders if not (ufss / f).is_dir()]
    if missing:
        raise RuntimeError(f"{ufss} has no folder {', '.join(missing)}")
    paths = "\n".join(f"addpath('{ufss / folder}');" for folder in folders)
    script = workdir / f"ufsbench_authors_{method}.m"
    script.write_text(SCRIPT.format(shims=workdir / "shims", paths=paths, data=data_file,
                                    c=n_clusters, m=N_SELECT, call=call, repeats=REPEATS,
                                    min_seconds=MIN_TIMED_SECONDS,
                                    max_repeats=MAX_REPEATS))
    proc = subprocess.run(["octave", "--no-gui", "--no-window-system", "--quiet",
                           "--no-init-file", str(script)], cwd=workdir, capture_output=True,
                          text=True, timeout=OCTAVE_TIMEOUT, env=dict(os.environ))
    found = re.search(r"^UFSBENCH_SECONDS (\S+)$", proc.stdout, flags=re.MULTILINE)
    if found is None:
        raise RuntimeError(f"Octave run of {method} failed (exit {proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return float(found.group(1))


def ufsbench_seconds(method: str, X, n_clusters: int) -> float:
    """Best wall seconds of our ``released`` preset's fits (``best_of_calls``), after one
    untimed fit."""
    from ufsbench.methods import make_selector

    settings = our_settings(method, X.shape[1], n_clusters)

    def fit():
        sel = make_selector(method, preset="released", n_features_to_select=N_SELECT,
                            n_clusters=n_clusters, random_state=0, **settings)
        _common.fit_quietly(sel, X)

    fit()
    return best_of_calls(fit)[0]


def best_of_calls(call) -> tuple[float, int]:
    """(best wall seconds, calls made) of ``call()``: at least REPEATS calls, and more until
    they add up to MIN_TIMED_SECONDS, at most MAX_REPEATS in all (the Octave script's loop)."""
    best, total, calls = float("inf"), 0.0, 0
    while calls < REPEATS or (total < MIN_TIMED_SECONDS and calls < MAX_REPEATS):
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
        best, total, calls = min(best, seconds), total + seconds, calls + 1
    return best, calls


class AuthorsOctave:
    params = [list(AUTHORS), DATA]
    param_names = ["method", "data"]
    timeout = 3600.0

    def setup_cache(self) -> dict:
        """Both sides' times for every method and data, measured once (Octave runs are slow to
        start): {data: {method: times}}, or {"skip": reason} / {data: {"skip": reason}}."""
        import scipy.io

        root = authors_root()
        if isinstance(root, str):
            return {"skip": root}
        times: dict = {}
        with tempfile.TemporaryDirectory(prefix="ufsbench-asv-octave-") as tmp:
            workdir = Path(tmp)
            (workdir / "shims").mkdir()
            (workdir / "shims" / "randsample.m").write_text(RANDSAMPLE_SHIM)
            for name in DATA:
                try:
                    X, n_clusters = data_case(name)
                except NotImplementedError as exc:
                    times[name] = {"skip": str(exc)}
                    continue
                data_file = workdir / f"{name}.mat"
                scipy.io.savemat(data_file, {"X": X})
                times[name] = {}
                for method in AUTHORS:
                    try:
                        times[name][method] = {
                            "authors": octave_seconds(method, root, data_file, workdir,
                                                      n_clusters),
                            "ufsbench": ufsbench_seconds(method, X, n_clusters)}
                    except (RuntimeError, subprocess.TimeoutExpired) as exc:
                        times[name][method] = {"error": str(exc)}
        return times

    setup_cache.timeout = 3600.0

    def setup(self, times: dict, method: str, data: str):
        if "skip" in times:
            raise NotImplementedError(f"authors' code under Octave: {times['skip']}")
        if "skip" in times[data]:
            raise NotImplementedError(times[data]["skip"])
        if "error" in times[data][method]:
            raise RuntimeError(times[data][method]["error"])

    def track_authors_seconds(self, times: dict, method: str, data: str):
        return times[data][method]["authors"]

    track_authors_seconds.unit = "seconds"

    def track_ufsbench_seconds(self, times: dict, method: str, data: str):
        return times[data][method]["ufsbench"]

    track_ufsbench_seconds.unit = "seconds"

    def track_speedup(self, times: dict, method: str, data: str):
        """Authors' seconds / ours (> 1: ours is faster)."""
        return times[data][method]["authors"] / times[data][method]["ufsbench"]

    track_speedup.unit = "x"
