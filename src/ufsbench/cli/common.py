"""What the ``ufsbench`` commands share: the one-line error exit and the evaluation-protocol
options of the commands that read the result store."""

from __future__ import annotations

import argparse
import sys


def fail(message: str) -> None:
    """``ufsbench: error: <message>`` on stderr and exit code 2 (bad input or settings)."""
    print(f"ufsbench: error: {message}", file=sys.stderr)
    sys.exit(2)


class CommandParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors take one line (the problem and where the help is)
    and exit code 2, not the usage block first; its subcommands' parsers are of this class."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def add_protocol_options(parser: argparse.ArgumentParser, what: str = "a table") -> None:
    """``--seed``, ``--n-runs``, ``--kmeans-init``, ``--kmeans-max-iter`` and ``--nmi``: which
    evaluation protocol's records ``what`` shows (read back by :func:`wanted_protocol`)."""
    from ufsbench.evaluation import KMEANS_INITS, NMI_NORMALISATIONS

    protocol = parser.add_argument_group(
        "evaluation protocol", f"{what} shows one protocol; by default the store's only one, or "
        "the default one (configs/config.yaml) when the store holds several")
    protocol.add_argument("--seed", type=int, help="the runs' seed (config: seed)")
    protocol.add_argument("--n-runs", type=int, help="K-means runs per evaluation")
    protocol.add_argument("--kmeans-init", choices=list(KMEANS_INITS), help="K-means starts")
    protocol.add_argument("--kmeans-max-iter", type=int, help="Lloyd iterations per run")
    protocol.add_argument("--nmi", choices=list(NMI_NORMALISATIONS),
                          help="the records' NMI normalisation")


def wanted_protocol(opts: argparse.Namespace) -> dict:
    """The protocol fields :func:`add_protocol_options` set (None: free)."""
    return {"seed": opts.seed, "n_runs": opts.n_runs, "kmeans_init": opts.kmeans_init,
            "kmeans_max_iter": opts.kmeans_max_iter, "nmi_normalisation": opts.nmi}
