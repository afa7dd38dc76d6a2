"""What `ufsbench report` and `ufsbench methods` print and write, through the command line."""

import io

import pandas as pd
import pytest
from test_plots import METHODS, _small_sets

from ufsbench.cli import main
from ufsbench.report import method_config
from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

PROTOCOL = EvaluationProtocol(n_runs=3)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """allfeatures and ls on two synthetic sets, plus ls with k-means++ starts on the first."""
    root = tmp_path_factory.mktemp("cli_store")
    first, second, _ = _small_sets()
    for data in (first, second):
        for name in ("allfeatures", "ls"):
            run_sweep(data, plan_tasks(data, METHODS[name], [5, 10], PROTOCOL, 0, root), n_jobs=1)
    plus = EvaluationProtocol(n_runs=3, kmeans_init="k-means++")
    run_sweep(first, plan_tasks(first, METHODS["ls"], [5], plus, 0, root), n_jobs=1)
    return root


def _run(capsys, *args):
    main(list(args))
    return capsys.readouterr()


def test_report_csv_to_the_terminal_is_one_tidy_table(store, capsys):
    out = _run(capsys, "report", "--results-dir", str(store), "--format", "csv")
    frame = pd.read_csv(io.StringIO(out.out))
    assert list(frame.columns[:2]) == ["metric", "rule"]
    assert out.out.count("metric,rule,") == 1          # one header, not one per block
    assert set(zip(frame["metric"], frame["rule"])) == {
        (m, r) for m in ("acc", "nmi") for r in ("paper", "label_free")}
    # a row per (metric, rule, data set, method): under the papers' rule 2 x 2 x 2
    assert (frame["rule"] == "paper").sum() == 8
    assert not frame.duplicated(["metric", "rule", "dataset", "method"]).any()
    assert {"value", "spread", "n_features", "params", "kmeans_init"} <= set(frame.columns)
    assert set(frame["kmeans_init"]) == {"random"}   # one protocol, as in every table
    assert "left out" in out.err and "left out" not in out.out


def test_report_csv_keeps_the_metric_and_rule_asked_for(store, capsys):
    out = _run(capsys, "report", "--results-dir", str(store), "--format", "csv",
               "--metric", "nmi", "--rule", "label_free")
    frame = pd.read_csv(io.StringIO(out.out))
    assert set(frame["metric"]) == {"nmi"} and set(frame["rule"]) == {"label_free"}


@pytest.mark.parametrize("fmt, written", [
    ("markdown", ["results.md"]), ("latex", ["results.tex"]), ("csv", ["results.csv"]),
    ("terminal", ["results.csv", "results.md", "results.tex"]),
])
def test_report_out_writes_the_format_asked_for(store, tmp_path, capsys, fmt, written):
    out = tmp_path / "tables"
    err = _run(capsys, "report", "--results-dir", str(store), "--format", fmt,
               "--out", str(out)).err
    assert sorted(p.name for p in out.iterdir()) == written
    for name in written:
        assert f"wrote {out / name}" in err


def test_written_csv_is_the_printed_csv(store, tmp_path, capsys):
    printed = _run(capsys, "report", "--results-dir", str(store), "--format", "csv",
                   "--out", str(tmp_path)).out
    assert (tmp_path / "results.csv").read_text() == printed


def test_report_help_says_what_out_writes(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "all three with --format terminal" in text


def test_html_page_names_records_of_other_protocols(store, tmp_path, capsys):
    page = tmp_path / "summary.html"
    err = _run(capsys, "report", "--results-dir", str(store), "--html", str(page)).err
    assert "2 record(s) of other evaluation protocols left out" in err
    text = page.read_text()
    assert "Not in these tables and figures: 2 record(s) of other evaluation protocols left out" \
        in text
    assert "kmeans_init=k-means++" in text


def test_methods_lists_grid_default_and_whole_summaries(capsys):
    out = _run(capsys, "methods").out
    line = next(row for row in out.splitlines() if row.startswith("scfs "))
    assert "alpha (5), beta (5)" in line and "alpha=1.0, beta=100.0" in line
    words = " ".join(out.split())
    # the summary in full (wrapped, never cut mid-word)
    assert ("K-means UFS: the h features whose rank-k spectral K-means objective is best "
            "(exact subset).") in words
    assert "ufsbench methods NAME" in out


def test_methods_name_shows_parameters_constraints_grid_default_paper(capsys):
    import inspect

    from ufsbench.methods import selector_class

    out = _run(capsys, "methods", "scfs").out
    words = " ".join(out.split())
    cls = selector_class("scfs")
    assert out.startswith("scfs: SCFS: sample-level self-expression")
    assert "paper: SCFS: Subspace Clustering unsupervised Feature Selection" in words
    assert "grid: alpha=[0.0001, 0.01, 1.0, 100.0, 10000.0]" in words and "(25 setting(s))" in words
    assert "default: alpha=1.0, beta=100.0" in words
    fixed = ", ".join(f"{k}={v}" for k, v in method_config("scfs")["params"].items())
    assert f"fixed: {fixed} (for every fit)" in words
    for preset in method_config("scfs").get("presets") or {}:
        assert f"(method.preset={preset})" in words
    equations = inspect.cleandoc(cls.__doc__).split("\n\n")[1].splitlines()[0]
    assert equations in out                                          # the model paragraph
    rows = {line.split()[0]: " ".join(line.split()) for line in out.splitlines()
            if line[:1].isalpha()}
    for name, constraints in cls._parameter_constraints.items():   # every declared constraint
        shown = [c for c in constraints if type(c).__name__ != "Hidden"]
        for c in shown:
            options = getattr(c, "options", None)
            text = ("one of " + ", ".join(repr(o) for o in sorted(options, key=str))
                    if isinstance(options, (set, frozenset)) else str(c))
            assert text.split()[0] in rows[name], (name, text)
        interval = next((c for c in shown if type(c).__name__ == "Interval"), None)
        if interval is not None and name not in ("n_features_to_select",):
            assert str(interval) in rows[name] or str(interval).split(" in ")[0] in rows[name]
    assert "set by the run" in rows["n_features_to_select"]
    assert "Hidden" not in out


def test_methods_help_is_help_and_unknown_name_one_line(capsys):
    main(["--help"])
    assert "methods [NAME]" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["methods", "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("usage: ufsbench methods [-h] [NAME]")
    with pytest.raises(SystemExit) as exit_:
        main(["methods", "nope"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "unknown method 'nope'" in err


def test_outputs_of_the_readme_commands_are_ignored_by_git():
    """What the README's commands write (figures, tables, the HTML page) never shows as
    untracked in a clone; the committed reference reports are not ignored."""
    import re
    import shutil
    import subprocess
    from pathlib import Path

    from ufsbench.plots import DEFAULT_OUT

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    readme = (root / "README.md").read_text()
    written = set(re.findall(r"ufsbench report .*?--(?:out|html) (results/\S+)", readme))
    assert {"results/tables", "results/summary.html"} <= written
    paths = sorted(written | {DEFAULT_OUT.as_posix()})
    probes = [f"{p}/x.png" if not p.endswith(".html") else p for p in paths]
    ignored = subprocess.run(["git", "check-ignore", *probes], cwd=root, capture_output=True,
                             text=True).stdout.split()
    assert sorted(ignored) == sorted(probes)
    tracked = subprocess.run(["git", "ls-files", "results"], cwd=root, capture_output=True,
                             text=True).stdout.split()
    assert tracked and not subprocess.run(["git", "check-ignore", "--no-index", *tracked],
                                          cwd=root, capture_output=True, text=True).stdout.split()


def test_the_label_free_rule_keeps_its_earlier_name_default_with_a_warning():
    from ufsbench.errors import UFSBenchError
    from ufsbench.report import canonical_rule

    assert canonical_rule("label_free") == "label_free"
    with pytest.warns(FutureWarning, match="now called 'label_free'"):
        assert canonical_rule("default") == "label_free"
    with pytest.raises(UFSBenchError, match="unknown rule 'best'"):
        canonical_rule("best")


@pytest.mark.parametrize("option, name", [("--dataset", "nosuch"), ("--method", "lss")])
def test_report_refuses_a_name_the_store_has_no_record_of(store, capsys, option, name):
    # A typo in a filter must not read as an empty store.
    with pytest.raises(SystemExit) as stopped:
        main(["report", "--results-dir", str(store), option, name])
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    what = option.removeprefix("--")
    assert len(err) == 1 and err[0].startswith(f"ufsbench: error: no results for {what} {name}")
    assert "stored: " in err[0]


def test_report_out_to_a_path_it_cannot_write_is_one_line(store, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")                       # a file where the directory would go
    with pytest.raises(SystemExit) as stopped:
        main(["report", "--results-dir", str(store), "--out", str(blocker / "tables")])
    assert stopped.value.code == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ufsbench")]
    assert err == [f"ufsbench: error: cannot write the tables to {blocker / 'tables'} (Not a "
                   f"directory); choose a writable --out directory"]


@pytest.mark.parametrize("rules", [[], ["--rule", "paper"]])
def test_report_latex_escapes_names(store, capsys, rules):
    # "synthetic_b": an unescaped underscore stops LaTeX ("Missing $ inserted").
    import re

    out = _run(capsys, "report", "--results-dir", str(store), "--format", "latex", *rules).out
    body = [line for line in out.splitlines() if not line.startswith("%")]
    assert any("synthetic\\_b" in line for line in body)
    assert not [line for line in body
                if re.search(r"(?<!\\)[_&%#]", line.replace(" & ", ""))]
    assert all(line.isascii() for line in body)                 # pdfLaTeX reads ASCII only
    assert "\\textbf{" in out and "$\\pm$" in out
