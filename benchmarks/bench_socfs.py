"""SOCFS and SOCFS + triplet: whole fits of the current code against the code at commit 0df8ac1.

Han & Kim (CVPR 2015) / UFSOL's Table 2 variant. The current code forms X^T (I + alpha L) X once
per fit instead of once per outer iteration (d <= n), reuses X W for the objective and hoists
X W B out of the inner loop; the fitted W must be the same bit for bit. Before = commit 0df8ac1
(``git show``), timed interleaved with after in one process:

    OMP_NUM_THREADS=1 python benchmarks/bench_socfs.py --data coil20 isolet prostate_ge usps:2000 \\
        --methods socfs socfs_triplet --settings "" "lambda_=1e6 alpha=1e-6"
"""

from __future__ import annotations

import argparse

import common  # noqa: F401  (puts the repository on sys.path)
from bench_ufsol import add_before_after_arguments, before_after, before_module

CLASSES = {"socfs": "SOCFS", "socfs_triplet": "SOCFSTriplet"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--methods", nargs="+", default=["socfs_triplet"], choices=sorted(CLASSES))
    add_before_after_arguments(parser)
    args = parser.parse_args()
    old = before_module("ufsbench/methods/socfs.py")
    for method in args.methods:
        print(f"\n## {method}")
        before_after(method, getattr(old, CLASSES[method]), args.data, args.settings, args.repeats)


if __name__ == "__main__":
    main()
