"""The command line end to end, as a user types it."""

import subprocess
import sys

import pytest

from ufsbench.testing import data_dir, requires_data

CLI = [sys.executable, "-m", "ufsbench.cli"]
FAST = ["n_jobs=1", "evaluation.n_runs=3"]


def ufsbench(*args, cwd=None, env=None):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def test_default_run_prints_table_and_resumes(tmp_path, monkeypatch):
    monkeypatch.delenv("UFSBENCH_RESULTS")
    tmp_path = tmp_path / "work"  # the user's directory (the test's cache lives beside it)
    tmp_path.mkdir()
    out = ufsbench("run", *FAST, "feature_counts=[10,30]", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "ACC (%)" in out.stdout and "NMI (%)" in out.stdout
    assert "allfeatures" in out.stdout and "ls" in out.stdout and "digits" in out.stdout
    assert "chosen with the true labels" in out.stdout and "label-free" in out.stdout
    assert "max(H(y), H(z))" in out.stdout
    # No Hydra output folders in the user's directory; results where README says.
    assert {p.name for p in tmp_path.iterdir()} == {"results"}
    records = list((tmp_path / "results" / "runs" / "digits").glob("*/*.json"))
    assert len(records) == 2 * 2 + 1  # ls: 2 settings x 2 counts; allfeatures: 1
    again = ufsbench("run", *FAST, "feature_counts=[10,30]", cwd=tmp_path)
    assert "2 already in the store, 0 new" in again.stderr
    assert again.stdout == out.stdout


def test_multirun_and_report(tmp_path):
    res = tmp_path / "res"
    work = tmp_path / "work"
    work.mkdir()
    out = ufsbench("run", "-m", "method=ls,allfeatures", "dataset=synthetic,digits",
                   "baselines=[]", f"results_dir={res}", "feature_counts=[10]", *FAST, cwd=work)
    assert out.returncode == 0, out.stderr
    assert not any(work.iterdir())  # no multirun.yaml or Hydra folders in the user's directory
    report = ufsbench("report", "--results-dir", str(res), "--format", "markdown",
                      "--out", str(tmp_path / "tables"))
    assert report.returncode == 0, report.stderr
    header = next(line for line in report.stdout.splitlines() if line.startswith("|  "))
    assert "digits" in header and "synthetic" in header
    assert "**" in report.stdout  # best in bold
    assert [p.name for p in (tmp_path / "tables").iterdir()] == ["results.md"]  # as asked
    assert (tmp_path / "tables" / "results.md").read_text() in report.stdout + "\n"
    latex = ufsbench("report", "--results-dir", str(res), "--format", "latex",
                     "--out", str(tmp_path / "tables"))
    assert latex.returncode == 0, latex.stderr
    assert "\\textbf" in (tmp_path / "tables" / "results.tex").read_text()


@pytest.mark.parametrize("args, message", [
    (["run", "method=nope"], "unknown method 'nope'; known: allfeatures"),
    (["run", "dataset=nope"], "unknown data set 'nope'; known:"),
    (["run", "-m", "method=ls,nope"], "unknown method 'nope'"),
    (["frobnicate"], "unknown command"),
    # Options of the argparse commands: one line naming the problem and the help, no usage block.
    (["report", "--format", "foo"], "ufsbench report: error: argument --format: invalid choice: "
                                    "'foo'"),
    (["report", "--bogus"], "unrecognized arguments: --bogus; see ufsbench report --help"),
    (["cache"], "ufsbench cache: error: the following arguments are required: action"),
    (["plot"], "ufsbench plot: error: the following arguments are required: kind"),
    (["plot", "counts", "--metric", "f1"], "argument --metric: invalid choice: 'f1'"),
    (["datasets", "--bogus"], "see ufsbench datasets --help"),
    (["methods", "ls", "extra"], "see ufsbench methods --help"),
    (["regress", "--bogus"], "see ufsbench regress --help"),
    (["conformance", "--bogus"], "see ufsbench conformance --help"),
])
def test_bad_names_one_line_and_exit_2(capsys, args, message):
    from ufsbench.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("args, message", [
    (["run", "+method.params.foo=1"], "ls has no parameter 'foo'"),
    (["run", "feature_counts=[0]"], "feature_counts=0 must be an integer >= 1"),
    (["run", "evaluation.nmi=geo"], "evaluation.nmi='geo' is not one of: max, sqrt, arithmetic"),
])
def test_bad_settings_one_line_and_exit_2(tmp_path, args, message):
    out = ufsbench(*args, cwd=tmp_path)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_missing_data_file_message(tmp_path):
    out = ufsbench("run", "dataset=lung", f"data_dir={tmp_path}", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    # one line naming the set, where it was looked for and where to put it
    assert len(out.stderr.strip().splitlines()) == 1
    assert f"data set 'lung' is not in {tmp_path}" in out.stderr
    assert f"save it as {tmp_path / 'lung.mat'}" in out.stderr


@requires_data("jaffe")
def test_checksum_mismatch_from_cli(tmp_path):
    data = bytearray((data_dir() / "jaffe.mat").read_bytes())
    data[-5] ^= 1
    (tmp_path / "jaffe.mat").write_bytes(bytes(data))
    out = ufsbench("run", "dataset=jaffe", f"data_dir={tmp_path}", cwd=tmp_path)
    assert out.returncode == 2 and "checksum mismatch" in out.stderr
    assert "Traceback" not in out.stderr


@requires_data("coil20")
def test_datasets_command_shows_status():
    out = ufsbench("datasets", "--data-dir", str(data_dir()))
    assert out.returncode == 0
    lines = {line.split()[0]: line for line in out.stdout.splitlines() if line.strip()}
    assert "verified" in lines["coil20"] and "missing" in lines["lung"]
    assert "embedded" in lines["digits"]


def test_methods_command_lists_registry():
    out = ufsbench("methods")
    assert out.returncode == 0 and "ls" in out.stdout and "allfeatures" in out.stdout


@requires_data("coil20")
@pytest.mark.slow
def test_ls_on_coil20_then_instant_rerun(tmp_path):
    # The data directory requires_data found (it may be ../shared/datasets, not $UFSBENCH_DATA).
    where = f"data_dir={data_dir()}"
    out = ufsbench("run", "method=ls", "dataset=coil20", where, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "coil20" in out.stdout
    again = ufsbench("run", "method=ls", "dataset=coil20", where, cwd=tmp_path)
    assert "0 new record(s)" in again.stderr


def test_report_never_mixes_kmeans_starts(tmp_path):
    """Two runs with random and k-means++ starts in one store: each run's table shows its own
    records, and `ufsbench report` shows one protocol (the default start unless asked), saying
    what it left out."""
    res = tmp_path / "res"
    common = [f"results_dir={res}", "feature_counts=[10]", "baselines=[]", *FAST]
    random = ufsbench("run", *common, cwd=tmp_path)
    plus = ufsbench("run", *common, "evaluation.kmeans_init=k-means++", cwd=tmp_path)
    assert random.returncode == 0 and plus.returncode == 0, plus.stderr
    assert "1 already in the store" not in plus.stderr   # separate records per protocol
    assert "Evaluation protocol not the default: n_runs=3 (default 20), kmeans_init=k-means++" \
        in plus.stdout
    assert "kmeans_init" not in random.stdout.split("ACC")[0]
    report = ufsbench("report", "--results-dir", str(res))
    assert report.returncode == 0, report.stderr
    assert "2 record(s) of other evaluation protocols left out" in report.stderr
    assert "kmeans_init=k-means++" in report.stderr
    assert report.stdout == random.stdout              # the same table as the random run's
    chosen = ufsbench("report", "--results-dir", str(res), "--kmeans-init", "k-means++")
    assert chosen.stdout == plus.stdout
    none = ufsbench("report", "--results-dir", str(res), "--seed", "7")
    assert none.returncode == 2 and none.stderr.count("\n") == 1
    assert (f"no record in {res} has the evaluation protocol asked for: 4 record(s)"
            in none.stderr)


@pytest.mark.parametrize("args", [["--help"], ["methods"]])
def test_a_reader_that_leaves_early_gets_no_traceback(args):
    # `ufsbench --help | head -1`: the reader closes the pipe before the output is written.
    import os

    read, write = os.pipe()
    os.close(read)
    done = subprocess.run(CLI + args, stdout=write, stderr=subprocess.PIPE, text=True,
                          timeout=120)
    os.close(write)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_multirun_prints_one_combined_table_and_its_progress(tmp_path):
    out = ufsbench("run", "-m", "method=ls,variance", "dataset=synthetic,digits", "baselines=[]",
                   f"results_dir={tmp_path / 'res'}", "feature_counts=[10]", *FAST, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("ACC (%)") == 1 and out.stdout.count("NMI (%)") == 1
    header = next(line for line in out.stdout.splitlines() if "digits" in line)
    assert "synthetic" in header                       # every job's data set in one table
    rows = [line.split()[0] for line in out.stdout.splitlines()
            if line.startswith(("ls ", "variance "))]
    assert rows == ["ls", "variance", "ls", "variance"]   # ACC and NMI, both methods
    progress = [line for line in out.stderr.splitlines() if line.startswith("ufsbench: job ")]
    assert [line.split(" done")[0] for line in progress] == [
        f"ufsbench: job {i} of 4" for i in range(1, 5)]
