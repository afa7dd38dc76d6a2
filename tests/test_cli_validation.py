"""A run either does what was asked or refuses before computing: one line, exit code 2, and the
store exactly as it was; a setting whose fit raised is named, ends the run with exit code 1, and
is retried by the next run. Everything through the command line, as a user types it."""

import subprocess
import sys
import textwrap

import pytest

CLI = [sys.executable, "-m", "ufsbench.cli"]
FAST = ["n_jobs=1", "evaluation.n_runs=3", "baselines=[]"]


def ufsbench(*args, cwd=None):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, cwd=cwd, timeout=300)


def _tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else None


def assert_refused(out, message, store):
    """Exit code 2, one line on stderr holding ``message``, nothing on stdout, no store."""
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ufsbench: error: "), out.stderr
    assert message in lines[0]
    assert _tree(store) is None and out.stdout == ""


@pytest.mark.parametrize("override, message", [
    ("evaluation.kmeans_init=kmeans++", "evaluation.kmeans_init='kmeans++' is not one of"),
    ("evaluation.kmeans_max_iter=2.5", "evaluation.kmeans_max_iter=2.5 must be an integer"),
    ("evaluation.n_runs=0", "evaluation.n_runs=0 must be an integer >= 1"),
    ("evaluation.scoring=[kmean]", "evaluation.scoring: 'kmean' is not one of"),
    ("n_jobs=abc", "n_jobs='abc' must be an integer or null"),
    ("seed=abc", "seed='abc' must be an integer"),
    ("report.summary=best", "report.summary='best' is not one of"),
    ("report.rules=[papers]", "report.rules: 'papers' is not one of"),
    ("launcher=slurm", "launcher='slurm' is not one of"),
    ("method.grid.weight=[hot]", "The 'weight' parameter of LaplacianScore"),
    ("method.params.k=-3", "The 'k' parameter of LaplacianScore must be an int"),
    ("feature_counts=[5000]", "feature_counts [5000] exceed the 64 features of digits"),
    ("evaluation.foo=1", "unknown key 'evaluation.foo': the keys at evaluation are"),
    ("+method.params.k=3", "'method.params.k' already exists"),
    ("method.k=3", "unknown key 'method.k': k is a parameter of ls; set it with method.params.k=3"),
    ("+method.weight=binary", "weight is a parameter of ls; set it with method.grid.weight=binary"),
    ("+method.foo=1", "unknown key 'method.foo': a method config has the keys name, params, grid"),
    ("method.params.kk=3", "ls has no parameter 'kk' (did you mean k?); its parameters are"),
    ("+method.grid.wieght=[heat]", "ls has no parameter 'wieght' (did you mean weight?)"),
    ("+method.params.weight=binary", "method.params.weight would be overridden by the grid axis "
                                     "method.grid.weight of ls: to fix weight, write "
                                     "method.grid.weight=binary (one value) and "
                                     "method.default.weight=binary (the label-free rule's "
                                     "setting)"),
])
def test_bad_setting_refused_in_one_line_before_any_computation(tmp_path, override, message):
    store = tmp_path / "store"
    out = ufsbench("run", "method=ls", "dataset=digits", f"results_dir={store}", *FAST, override,
                   cwd=tmp_path)
    assert_refused(out, message, store)


@pytest.mark.parametrize("overrides, message", [
    (["method.params.k=3"], "method.params.k would be overridden by method.preset=released, "
                            "which sets k=5; to run the preset with another k, write "
                            "method.presets.released.k=3"),
    (["+method.params.sigma=2.0"], "which sets sigma=mean_distance"),
    (["method.grid.weight=[heat,binary]"], "method.grid.weight would be overridden by "
                                           "method.preset=released, which sets weight=heat; "
                                           "to vary weight, run without the preset"),
])
def test_a_value_the_preset_would_override_is_refused_naming_the_presets_key(tmp_path, overrides,
                                                                           message):
    store = tmp_path / "store"
    out = ufsbench("run", "method=ls", "dataset=digits", "method.preset=released",
                   f"results_dir={store}", *FAST, *overrides, cwd=tmp_path)
    assert_refused(out, message, store)


def test_a_changed_preset_value_is_fitted_and_recorded_as_a_change(tmp_path):
    import json

    store = tmp_path / "store"
    base = ["run", "method=ls", "dataset=digits", f"results_dir={store}", *FAST,
            "feature_counts=[10]"]
    out = ufsbench(*base, "method.preset=released", "method.presets.released.k=3", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    records = [json.loads(p.read_text()) for p in (store / "digits" / "ls").rglob("*.json")]
    assert records and all(r["key"]["params"]["k"] == 3 for r in records)
    assert all(r["key"]["params"]["sigma"] == "mean_distance" for r in records)
    assert {r["preset"] for r in records} == {"released with k=3"}
    assert "no parameter" in ufsbench(*base, "method.preset=released",
                                      "method.presets.released.kk=3", cwd=tmp_path).stderr


def test_a_method_config_with_an_unknown_key_is_refused():
    from ufsbench.errors import UFSBenchError
    from ufsbench.run_config import check_method_settings

    with pytest.raises(UFSBenchError, match="unknown key 'method.grdi': a method config has"):
        check_method_settings({"name": "ls", "grdi": {"weight": ["heat"]}})
    with pytest.raises(UFSBenchError, match="k is a parameter of ls; set it with "
                                            r"\+method.params.k=<value>"):
        check_method_settings({"name": "ls", "k": 3})


def test_a_typo_leaves_the_store_as_it_was_for_the_correct_run(tmp_path):
    store = tmp_path / "store"
    args = ["method=ls", "dataset=digits", f"results_dir={store}", "feature_counts=[10]", *FAST]
    first = ufsbench("run", *args)
    assert first.returncode == 0, first.stderr
    before = _tree(store)
    typo = ufsbench("run", *args, "evaluation.kmeans_init=kmeans++")
    assert typo.returncode == 2 and _tree(store) == before
    right = ufsbench("run", *args, "evaluation.kmeans_init=k-means++")
    assert right.returncode == 0, right.stderr
    assert "0 already in the store, 2 new record(s)" in right.stderr
    assert "ACC (%)" in right.stdout


#: A user's launcher that makes LS's binary-weight fit raise (as a singular solve would).
FAILING = textwrap.dedent("""
    import sys
    from ufsbench.cli import main
    from ufsbench.methods.ls import LaplacianScore

    real_fit = LaplacianScore._fit

    def fit(self, X):
        if self.weight == "binary":
            raise ArithmeticError("the binary graph is singular here")
        return real_fit(self, X)

    LaplacianScore._fit = fit
    main(sys.argv[1:])
""")


def test_failed_setting_named_exit_1_and_retried_by_the_next_run(tmp_path):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    store = tmp_path / "store"
    args = ["run", "method=ls", "dataset=digits", f"results_dir={store}", "feature_counts=[10]",
            *FAST]

    def failing(*extra):
        return subprocess.run([sys.executable, str(script), *args, *extra], capture_output=True,
                              text=True, timeout=300)

    first = failing()
    assert first.returncode == 1, first.stderr
    assert "1 setting(s) failed" in first.stderr
    assert "ls [k=5, weight=binary]: ArithmeticError: the binary graph is singular" in first.stderr
    assert "ACC (%)" in first.stdout  # the heat setting's table is still shown
    notes = list((store / "digits" / "ls" / "failed").glob("*.json"))
    assert len(notes) == 1

    again = failing()  # a rerun retries the failed setting (and it fails again)
    assert again.returncode == 1 and "1 already in the store, 0 new" in again.stderr

    skipped = failing("--skip-failed")
    assert skipped.returncode == 0, skipped.stderr
    assert "2 already in the store, 0 new" in skipped.stderr

    report = ufsbench("report", "--results-dir", str(store), "--html", str(tmp_path / "p.html"))
    assert report.returncode == 0, report.stderr
    assert "1 failed setting(s) left out of the table" in report.stderr
    assert "digits / ls" in report.stderr and "singular" in report.stderr
    page = (tmp_path / "p.html").read_text()
    assert "failed setting(s) left out" in page and "singular" in page

    fixed = ufsbench(*args)  # the method no longer raises: the setting is computed at last
    assert fixed.returncode == 0, fixed.stderr
    assert "1 already in the store, 1 new record(s)" in fixed.stderr
    assert not list((store / "digits" / "ls" / "failed").glob("*.json"))


@pytest.mark.parametrize("sweep, message", [
    (["method.params.k=5,0"], "job 2 of 2 (method.params.k=0): method ls at {'k': 0"),
    (["dataset=digits,nosuch.csv"], "data file nosuch.csv does not exist"),
    (["method=ls,variance", "method.params.k=5"],
     "unknown key 'method.params.k': variance has no parameter 'k'"),
])
def test_a_multirun_checks_every_job_before_the_first_runs(tmp_path, sweep, message):
    store = tmp_path / "store"
    given = {o.partition("=")[0] for o in sweep}
    base = [o for o in ("method=ls", "dataset=digits") if o.partition("=")[0] not in given]
    out = ufsbench("run", "-m", *base, *sweep, f"results_dir={store}", *FAST, cwd=tmp_path)
    assert_refused(out, message, store)


def test_a_multirun_refuses_a_data_set_it_cannot_have_before_any_job(tmp_path):
    import os

    store, empty = tmp_path / "store", tmp_path / "no-data"
    empty.mkdir()
    out = subprocess.run(CLI + ["run", "-m", "method=ls", "dataset=digits,jaffe",
                                f"data_dir={empty}", f"results_dir={store}", *FAST],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={**os.environ, "UFSBENCH_OFFLINE": "1"})
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "job 2 of 2 (dataset=jaffe): data set 'jaffe'" in lines[0], out.stderr
    assert "downloads are off" in lines[0] and lines[0].endswith("(no job has run)")
    assert _tree(store) is None


def test_a_multirun_checks_feature_counts_against_every_data_set_first(tmp_path):
    store = tmp_path / "store"
    out = ufsbench("run", "-m", "method=ls", "dataset=synthetic,digits", "feature_counts=[80]",
                   f"results_dir={store}", *FAST, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ufsbench: error: job 2 of 2 (dataset=digits):")
    assert "exceed the 64 features of digits" in lines[0] and _tree(store) is None


def test_a_multirun_counts_range_and_glob_sweeps_and_refuses_an_empty_glob(tmp_path):
    store = tmp_path / "store"
    base = ["dataset=synthetic", "feature_counts=[5]", f"results_dir={store}", *FAST]
    ranged = ufsbench("run", "-m", "method=ls", "method.params.k=range(3,5)", *base, cwd=tmp_path)
    assert ranged.returncode == 0, ranged.stderr
    assert "job 2 of 2 done" in ranged.stderr and "of 1 done" not in ranged.stderr
    globbed = ufsbench("run", "-m", "method=glob(varia*)", *base, cwd=tmp_path)
    assert globbed.returncode == 0, globbed.stderr
    assert "synthetic / variance:" in globbed.stderr and "job 1 of 1 done" in globbed.stderr
    empty = ufsbench("run", "-m", "method=glob(zz*)", *base, cwd=tmp_path)
    assert empty.returncode == 2
    assert empty.stderr.startswith("ufsbench: error: method=glob(zz*) matches none of the "
                                   "options of method: allfeatures, ")


def test_a_multirun_checks_feature_counts_of_every_job_on_a_data_file(tmp_path):
    # The same file in every job: read once, its d held against each job's counts.
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.standard_normal((30, 8)), columns=[f"g{j}" for j in range(8)])
    table["label"] = np.repeat(["a", "b", "c"], 10)
    table.to_csv(tmp_path / "own.csv", index=False)
    store = tmp_path / "store"
    out = ufsbench("run", "-m", "method=variance", "dataset=./own.csv",
                   "feature_counts=[2],[20]", f"results_dir={store}", *FAST, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "job 2 of 2 (feature_counts=[20])" in lines[0], out.stderr
    assert _tree(store) is None
