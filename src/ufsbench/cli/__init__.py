"""The ``ufsbench`` command: dispatch to its subcommands (``run.py``: run, select; ``info.py``:
report, datasets, methods, cache; ``plot.py``: plot, regress).

Bad input ends with one line ``ufsbench: error: ...`` on stderr and exit code 2, before anything
is computed; a run in which some settings failed ends with a summary naming each and exit code 1;
Ctrl-C, or a SIGTERM (``kill``, a batch system's time limit), keeps every finished record and
says how to resume.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from ufsbench.cli.common import fail as _fail
from ufsbench.cli.conformance import _conformance
from ufsbench.cli.info import _cache, _datasets, _methods, _report
from ufsbench.cli.planted import _planted
from ufsbench.cli.plot import _plot, _regress
from ufsbench.cli.run import _run, _select
from ufsbench.cli.stability import _stability
from ufsbench.errors import UFSBenchError

USAGE = """usage: ufsbench <command> [options]

commands:
  run [overrides]   run one method on one data set over its grid (Hydra; -m for multirun sweeps)
                    e.g. ufsbench run method=ls dataset=coil20
                         ufsbench run -m method=ls,allfeatures dataset=coil20,orl
                         ufsbench run method=ls dataset=./colon.csv dataset.label=class
  select [overrides]  select features without evaluation; write them to CSV and JSON
                    e.g. ufsbench select method=ls dataset=./data.csv n_features=20 out=sel/
  stability [overrides]  selection stability over B subsamples of the rows (costs B fits per
                    method and data set), e.g. ufsbench stability method=ls,mcfs dataset=jaffe
  planted [keys]    precision@m on seeded data with planted informative features (5 regimes)
  report            tables (ACC/NMI) from everything in the result store
  datasets          the known data sets: shape, classes, papers, present and verified?
  datasets fetch NAME ... | --all [--dry-run]
                    download the papers' data sets (checksum-verified) into the data dir
  methods [NAME]    the available selectors (grid, default); with NAME one method's
                    parameters and allowed values, preset, grid, default, paper, equations
  plot <kind>       figures from the result store (ufsbench plot --help)
  regress           rerun the fixed regression subset and compare with the stored reference
  cache info|clear  the disk cache of kNN graphs and SVDs that runs share: show or empty it
  conformance [DIR] each method's `released` preset against outputs of the authors' own code
"""


COMMANDS = {"run": _run, "select": _select, "report": _report, "datasets": _datasets,
            "methods": _methods, "plot": _plot, "regress": _regress, "cache": _cache,
            "conformance": _conformance, "stability": _stability, "planted": _planted}


class Terminated(KeyboardInterrupt):
    """A SIGTERM, raised where the process is so that it ends the way Ctrl-C does: workers
    stopped, finished records kept, one line on stderr (Python's default would end the
    process at once and leave the worker pool's resources for its tracker to report)."""


def _raise_terminated(_signum, _frame) -> None:
    raise Terminated


def _one_line_warning(message, category, *_args, **_kwargs) -> str:
    return f"ufsbench: {category.__name__}: {message}\n"


def main(argv: list[str] | None = None) -> None:
    import warnings

    shown_as = warnings.formatwarning
    warnings.formatwarning = _one_line_warning  # no source lines in a user's terminal
    in_main_thread = threading.current_thread() is threading.main_thread()
    on_sigterm = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        _main(sys.argv[1:] if argv is None else list(argv))
    finally:
        warnings.formatwarning = shown_as
        if in_main_thread:
            signal.signal(signal.SIGTERM, on_sigterm)


def _help(_args: list[str]) -> None:
    print(USAGE)


def _main(argv: list[str]) -> None:
    name = "help" if not argv or argv[0] in ("-h", "--help") else argv[0]
    if name != "help" and name not in COMMANDS:
        _fail(f"unknown command {argv[0]!r}; use one of: {', '.join(COMMANDS)}")
    command = _help if name == "help" else COMMANDS[name]
    try:
        command(argv[1:])
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
    except UFSBenchError as exc:
        _fail(str(exc))
    except BrokenPipeError:  # e.g. `ufsbench report | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        print(f"\nufsbench: {'terminated' if terminated else 'interrupted'}; every finished "
              f"result is kept in the store; run the same command again to resume",
              file=sys.stderr)
        sys.exit(128 + signal.SIGTERM if terminated else 130)

