"""Timing of SOGFS's W-step (m smallest eigenvectors of X^T L_S X + gamma Q), fast vs dense.

G = gamma Q + X^T L_S X is d x d: a diagonal plus a rank <= n term. Two situations arise:

* Q = I (the start of Algorithm 1): the exact tied-diagonal reduction
  (ufsbench.numerics.diag_lowrank) needs one thin SVD of X^T and an n x n eigenproblem,
  O(d n^2), instead of the O(d^3) dense eigenproblem. With d >> n and m = d/2 the cut is degenerate
  (the m smallest eigenvalues all equal gamma), so the two paths return different but equally
  optimal subspaces: compared are the eigenvalues, the value of problem (13) and the residual.
* General Q (every later iteration, all Q_ii distinct): there is no exact shortcut; both "auto"
  and "dense" do the dense eigenproblem. Its time is what a SOGFS iteration costs.

Whole fits, the selector (sparse S and L_S, solver="auto") against the dense Algorithm 2 of
tests/methods/_reference_sogfs.py (dense n x n S and L_S, whole-row sorts, dense eigh for F), at
the config default (k = 5, max_iter = 50, gamma = 1, center_unit): fit times, iterations, and how
far the two fits are apart (scores, objective (6) history, components history, top-100 overlap).

CPU seconds of default fits (``--cpu``): one fit per data spec at the config default (and the
``released`` preset with ``--preset released``), timed by ``time.process_time`` (CPU seconds of
the process: with OPENBLAS_NUM_THREADS=1 those of one thread, robust to other load on the
machine), with the outer iterations, whether the fit converged and the seconds per iteration;
e.g. the paper's data sets, or the scaling in n on seeded USPS subsets
(``--cpu usps:1000 usps:2000 usps:4000``).

Usage: python benchmarks/bench_sogfs.py [--sizes 800x60,2000x100] [--dense-max-d 4000]
       [--fits synthetic:300x200] (real data: --fits coil20 orl srbct umist --sizes "")
       [--cpu jaffe umist orl srbct usps_sogfs binalpha isolet coil20]
(larger sizes: --sizes 3312x203,10000x100). Set OPENBLAS_NUM_THREADS=1 (or OMP_NUM_THREADS) to
pin the BLAS threads.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from common import jaccard, load_bench_data, markdown_table  # noqa: F401 (sys.path set there)

from ufsbench.methods.base import make_selector
from ufsbench.methods.sogfs import alpha_eq27, s_step
from ufsbench.numerics import l21_reweight, laplacian, squared_distances, sym
from ufsbench.numerics.diag_lowrank import dense_smallest_eigvecs, smallest_eigvecs_tied_diag_plus_lowrank

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "methods"))
from _reference_sogfs import sogfs_reference  # noqa: E402


def problem(d: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, : d // 20] += 3.0 * rng.choice([-1.0, 1.0], size=(3, d // 20))[np.arange(n) % 3]
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    D = squared_distances(X)
    L = laplacian(sym(s_step(D, alpha_eq27(D, 5))))
    return X, L


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


FIT_HEADER = ["data", "n x d", "c", "iters fast/dense", "fast s", "dense s", "speed-up",
              "max abs dscore", "max rel dobj(6)", "same comps", "top-100 overlap"]


def compare_fits(spec: str, max_iter: int, gamma: float) -> list:
    """One table row: the SOGFS fit (fast) and the dense reference Algorithm 2 on one data set."""
    label, X, _, c = load_bench_data(spec)
    seconds = {}
    seconds["fast"], fast = timed(lambda: make_selector(
        "sogfs", n_clusters=c, gamma=gamma, max_iter=max_iter, random_state=0).fit(X))
    seconds["dense"], dense = timed(lambda: sogfs_reference(X, c, gamma=gamma, max_iter=max_iter))
    same_len = fast.n_iter_ == dense["n_iter"]
    dobj = (np.max(np.abs(np.subtract(fast.objective_history_, dense["objective_history"]))
                   / np.abs(dense["objective_history"])) if same_len else float("nan"))
    top = min(100, X.shape[1])
    return [label.split()[0], f"{X.shape[0]} x {X.shape[1]}", c,
            f"{fast.n_iter_}/{dense['n_iter']}",
            f"{seconds['fast']:.1f}", f"{seconds['dense']:.1f}",
            f"{seconds['dense'] / seconds['fast']:.2f}x",
            f"{np.abs(fast.scores_ - dense['scores']).max():.1e}", f"{dobj:.1e}",
            fast.n_components_history_ == dense["n_components_history"],
            f"{jaccard(fast.ranking_[:top], fast._rank(dense['scores'])[:top]):.2f}"]


CPU_HEADER = ["data", "n x d", "c", "CPU s", "outer iterations", "converged", "CPU s / iteration"]


def cpu_fit_row(spec: str, gamma: float, preset: str | None) -> list:
    """One table row: CPU seconds (process_time) of one fit at the config default."""
    import warnings

    label, X, _, c = load_bench_data(spec)
    selector = make_selector("sogfs", preset=preset, n_clusters=c, gamma=gamma, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # an unconverged fit shows in its own column
        start = time.process_time()
        selector.fit(X)
        cpu = time.process_time() - start
    return [label.split()[0], f"{X.shape[0]} x {X.shape[1]}", c, f"{cpu:.2f}", selector.n_iter_,
            selector.converged_, f"{cpu / selector.n_iter_:.2f}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="800x60,2000x100", help="comma list of DxN ('' = none)")
    ap.add_argument("--fits", nargs="*", default=["synthetic:300x200"],
                    help="data specs for whole fits, selector vs dense reference "
                         "(benchmarks/common.py specs)")
    ap.add_argument("--max-iter", type=int, default=50)
    ap.add_argument("--m-fraction", type=float, default=0.5,
                    help="projection dimension m (SOGFS n_components) = round(f * d)")
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--dense-max-d", type=int, default=4000,
                    help="skip dense eigensolves above this d (10000 takes ~10 min on one core)")
    ap.add_argument("--cpu", nargs="*", default=[],
                    help="data specs for CPU-second timings of default fits (process_time)")
    ap.add_argument("--preset", default=None, help="preset of the --cpu fits (e.g. released)")
    args = ap.parse_args()
    print(f"# {platform.platform()} | python {platform.python_version()} | numpy "
          f"{np.__version__} | cpus {os.cpu_count()} | OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}")
    header = (f"{'d':>6} {'n':>5} {'m':>6} {'case':<10} {'fast[s]':>9} {'dense[s]':>9} "
              f"{'max|dlambda|':>13} {'d(13)':>10} {'resid_fast':>11} note")
    print(header)
    for item in filter(None, args.sizes.split(",")):
        d, n = (int(v) for v in item.lower().split("x"))
        m = max(1, int(round(args.m_fraction * d)))
        X, L = problem(d, n)
        q = np.ones(d)
        t_fast, (v_f, W_f, path) = timed(lambda: smallest_eigvecs_tied_diag_plus_lowrank(
            args.gamma * q, X.T, L, m, max_reduced_fraction=1.0))
        XW = X @ W_f
        tr_fast = np.einsum("ij,ij->", XW, L @ XW) + args.gamma * m
        resid = np.abs(args.gamma * W_f + X.T @ (L @ XW) - W_f * v_f).max()
        if d <= args.dense_max_d:
            G = args.gamma * np.diag(q) + X.T @ (L @ X)
            t_dense, (v_d, W_d) = timed(lambda: dense_smallest_eigvecs(G, min(m + 1, d)))
            next_val = v_d[m] if m < d else np.inf
            v_d, W_d = v_d[:m], W_d[:, :m]
            tr_dense = np.einsum("ij,ij->", W_d, G @ W_d)
            dl, dtr = np.abs(v_f - v_d).max(), abs(tr_fast - tr_dense)
            degenerate = bool(abs(next_val - v_d[m - 1]) < 1e-9)
            note = f"path={path}; cut degenerate={degenerate}"
            print(f"{d:6d} {n:5d} {m:6d} {'Q=I':<10} {t_fast:9.3f} {t_dense:9.3f} {dl:13.2e} "
                  f"{dtr:10.2e} {resid:11.2e} {note}", flush=True)
            # a later iteration: Q from Eq. (12), all entries distinct -> dense either way
            q2 = l21_reweight(W_d, eps=1e-8, factor=0.5)
            G2 = args.gamma * np.diag(q2) + X.T @ (L @ X)
            t2, _ = timed(lambda: dense_smallest_eigvecs(G2, m))
            print(f"{d:6d} {n:5d} {m:6d} {'Q general':<10} {'-':>9} {t2:9.3f} {'-':>13} "
                  f"{'-':>10} {'-':>11} no exact shortcut: {len(np.unique(q2))} distinct Q_ii",
                  flush=True)
        else:
            print(f"{d:6d} {n:5d} {m:6d} {'Q=I':<10} {t_fast:9.3f} {'skipped':>9} {'-':>13} "
                  f"{'-':>10} {resid:11.2e} path={path}; dense ~ (d/3312)^3 x the 3312 time",
                  flush=True)


    if args.cpu:
        print(f"\n## CPU seconds of one fit (process_time; gamma={args.gamma}, preset="
              f"{args.preset}, OPENBLAS_NUM_THREADS="
              f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')})")
        rows = []
        for spec in args.cpu:
            rows.append(cpu_fit_row(spec, args.gamma, args.preset))
            print(markdown_table(CPU_HEADER, rows[-1:]).splitlines()[-1], flush=True)
        print()
        print(markdown_table(CPU_HEADER, rows))

    if args.fits:
        print(f"\n## Whole fits, selector vs dense reference (gamma={args.gamma}, "
              f"max_iter={args.max_iter})")
        rows = []
        for spec in args.fits:
            rows.append(compare_fits(spec, args.max_iter, args.gamma))
            print(markdown_table(FIT_HEADER, rows[-1:]).splitlines()[-1], flush=True)
        print()
        print(markdown_table(FIT_HEADER, rows))


if __name__ == "__main__":
    main()
