"""``ufsbench plot`` and ``ufsbench regress``: figures from the store, and the regression check."""

from __future__ import annotations

import sys

from ufsbench.cli.common import CommandParser, wanted_protocol
from ufsbench.errors import UFSBenchError


# -- plot ------------------------------------------------------------------------------------
def _plot_common_options() -> CommandParser:
    from ufsbench.cli.common import add_protocol_options
    from ufsbench.plots import DEFAULT_OUT
    from ufsbench.report import SUMMARIES

    parent = CommandParser(add_help=False)
    parent.add_argument("--results-dir", help="result store (default: $UFSBENCH_RESULTS, then "
                                              "./results/runs)")
    parent.add_argument("--out", default=str(DEFAULT_OUT),
                        help=f"directory for the PNG and PDF files (default: {DEFAULT_OUT})")
    parent.add_argument("--dataset", nargs="*", help="only these data sets")
    parent.add_argument("--method", nargs="*", help="only these methods")
    parent.add_argument("--summary", choices=list(SUMMARIES), default="mean")
    add_protocol_options(parent, "a figure")
    return parent


def _plot_parser() -> CommandParser:
    from ufsbench.report import METRICS, RULE_ALIASES, RULES

    parent = _plot_common_options()
    parser = CommandParser(prog="ufsbench plot", description="figures (PNG + PDF) from "
                                     "the result store")
    sub = parser.add_subparsers(dest="kind", required=True, metavar="kind")
    counts = sub.add_parser("counts", parents=[parent], help="ACC/NMI against the number of "
                            "selected features, a panel per data set")
    counts.add_argument("--metric", nargs="*", choices=list(METRICS), default=list(METRICS))
    counts.add_argument("--rule", choices=[*RULES, *RULE_ALIASES], default="paper")
    sens = sub.add_parser("sensitivity", parents=[parent], help="heatmaps over the two main "
                          "grid parameters, a panel per feature count")
    sens.add_argument("--metric", choices=list(METRICS), default="acc")
    sens.add_argument("--params", nargs=2, metavar="NAME", help="the two parameters to show "
                      "(default: the first two of the method's grid)")
    sens.add_argument("--counts", nargs="*", type=int, help="only these feature counts")
    sub.add_parser("convergence", parents=[parent], help="objective value per iteration, a "
                   "panel per method, a figure per data set")
    admm = sub.add_parser("admm", parents=[parent], help="K-means UFS: ||V||_F per iteration, "
                          "vanilla vs bi-linear ADMM (fits the selector; no stored results)")
    admm.add_argument("--n-features", type=int, default=20)
    admm.add_argument("--max-iter", type=int, default=300)
    admm.add_argument("--data-dir")
    pixels = sub.add_parser("pixels", parents=[parent], help="selected features painted over "
                            "sample images (image data sets)")
    pixels.add_argument("--counts", nargs="*", type=int, help="only these feature counts")
    pixels.add_argument("--samples", nargs="*", type=int, help="sample indices to draw on "
                        "(default: the first image of each of the first two classes)")
    pixels.add_argument("--rule", choices=[*RULES, *RULE_ALIASES], default="paper")
    pixels.add_argument("--data-dir")
    ranks = sub.add_parser("ranks", parents=[parent], help="mean ranks across data sets and a "
                           "critical-difference diagram (Friedman + Nemenyi)")
    ranks.add_argument("--metric", nargs="*", choices=list(METRICS), default=list(METRICS))
    ranks.add_argument("--rule", choices=[*RULES, *RULE_ALIASES], default="paper")
    ranks.add_argument("--alpha", type=float, default=0.05, choices=[0.05, 0.1])
    return parser


def _admm_histories(dataset: str = "digits", n_features: int = 20, max_iter: int = 300,
                   data_dir=None) -> tuple[dict, int]:
    """K-means UFS fitted with its vanilla and its bi-linear ADMM (deterministic, random_state 0):
    ({variant: ||V||_F per iteration}, h), what ``plots.admm_figure`` draws."""
    import numpy as np

    from ufsbench.datasets import load_dataset
    from ufsbench.methods import make_selector

    data = load_dataset(dataset, data_dir=data_dir)
    m = min(int(n_features), data.n_features)
    histories = {}
    for admm in ("vanilla", "bilinear"):
        selector = make_selector("kmufs", n_features_to_select=m, n_clusters=data.n_classes,
                                 admm=admm, max_iter=int(max_iter), random_state=0)
        histories[admm] = np.asarray(selector.fit(data.X).v_norm_history_, dtype=float)
    return histories, m


def _plot_figures(opts) -> list:
    """(file stem, figure) pairs for the parsed command."""
    from ufsbench.plots import (
        admm_figure,
        cd_figure,
        convergence_figure,
        convergence_records,
        counts_figure,
        grid_parameters,
        pixels_figure,
        ranks_caption,
        results_frame,
        safe_stem,
        sensitivity_figure,
    )
    from ufsbench.report import METRICS
    from ufsbench.stats import rank_methods, rank_table

    if opts.kind == "admm":
        dataset = (opts.dataset or ["digits"])[0]
        return [(f"admm_{safe_stem(dataset)}_h{opts.n_features}",
                 admm_figure(*_admm_histories(dataset, opts.n_features, opts.max_iter,
                                             opts.data_dir), dataset, opts.max_iter))]
    df = results_frame(opts.results_dir, opts.dataset, opts.method, wanted_protocol(opts))
    datasets = sorted(df["dataset"].unique())
    if opts.kind == "counts":
        return [(f"counts_{m}", counts_figure(df, m, opts.rule, opts.summary))
                for m in opts.metric]
    if opts.kind == "convergence":
        with_history = convergence_records(df)
        return [(f"convergence_{safe_stem(d)}", convergence_figure(df, d))
                for d in sorted(with_history["dataset"].unique())]
    if opts.kind == "sensitivity":
        pairs = [(d, m) for (d, m), sub in df.groupby(["dataset", "method"], sort=True)
                 if grid_parameters(sub, m)]
        if not pairs:
            raise UFSBenchError("no stored method has a parameter grid with more than one value; "
                                "run a method with a grid, e.g. `ufsbench run method=scfs`")
        return [(f"sensitivity_{safe_stem(d)}_{safe_stem(m)}_{opts.metric}",
                 sensitivity_figure(df, d, m, opts.metric, opts.summary, opts.params,
                                    opts.counts)) for d, m in pairs]
    if opts.kind == "pixels":
        return [(f"pixels_{safe_stem(d)}", pixels_figure(df, d, opts.method, opts.counts, opts.samples,
                                                    rule=opts.rule, data_dir=opts.data_dir))
                for d in (opts.dataset or datasets)]
    figures = []
    for metric in opts.metric:
        test = rank_methods(df, metric, opts.rule, opts.summary, opts.alpha)
        figure = cd_figure(test, METRICS[metric], ranks_caption(df, opts.rule))  # >= 3 methods
        print(f"{METRICS[metric]} ranks ({opts.rule} rule; 1 = best):\n"
              f"{rank_table(test).round(2).to_string()}\n")
        figures.append((f"ranks_{metric}", figure))
    return figures


def _plot(args: list[str]) -> None:
    """``ufsbench plot <kind> [options]``: write each figure as PNG and PDF into --out."""
    from ufsbench.plots import is_image_dataset, results_frame, save_figure

    opts = _plot_parser().parse_args(args)
    if opts.kind == "pixels" and not opts.dataset:
        df = results_frame(opts.results_dir, None, opts.method, wanted_protocol(opts))
        opts.dataset = [d for d in sorted(df["dataset"].unique()) if is_image_dataset(d)]
        if not opts.dataset:
            raise UFSBenchError("no image data set in the store; pixel plots need one, e.g. "
                                "`ufsbench run dataset=digits`")
    for stem, fig in _plot_figures(opts):
        for path in save_figure(fig, opts.out, stem):
            print(f"wrote {path}", file=sys.stderr)


def _regress(args: list[str]) -> None:
    from ufsbench.regress import cli_main

    cli_main(args)
