"""A researcher's own data from the command line: data files by path, feature names, default
feature counts, bad input, selection without evaluation, and user registry directories."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.io

from ufsbench.cli import main
from ufsbench.datasets import default_feature_counts, load_dataset, load_file_dataset, path_dataset_config
from ufsbench.errors import DataError
from ufsbench.methods import make_selector
from ufsbench.records import load_results
from ufsbench.run_config import resolve_feature_counts

CLI = [sys.executable, "-m", "ufsbench.cli"]
FAST = ["n_jobs=1", "evaluation.n_runs=2", "progress=false"]


def ufsbench(*args, cwd=None, env=None):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


@pytest.fixture
def held_out(tmp_path):
    """The embedded synthetic set cut to 90 samples x 30 features, saved as .mat and .csv."""
    data = load_dataset("synthetic")
    rows = np.concatenate([np.flatnonzero(data.y == c)[:30] for c in range(3)])
    X, y = data.X[rows][:, :30], data.y[rows]
    scipy.io.savemat(tmp_path / "heldout.mat", {"X": X, "Y": y[:, None] + 1})
    table = pd.DataFrame(X, columns=[f"gene_{j}" for j in range(X.shape[1])])
    table.insert(3, "class", np.array(["a", "b", "c"])[y])  # the label need not be last
    table.to_csv(tmp_path / "heldout_table.csv", index=False)
    return tmp_path, X, y


def test_mat_and_csv_run_in_one_line_each_and_the_report_shows_them(held_out):
    tmp_path, X, _ = held_out
    res = tmp_path / "res"
    mat = ufsbench("run", "method=ls", f"dataset={tmp_path / 'heldout.mat'}", *FAST,
                   f"results_dir={res}", cwd=tmp_path)
    assert mat.returncode == 0, mat.stderr
    # d = 30 <= 60: 10 %, 20 %, ..., 50 % of d; 3 classes from the labels.
    assert "feature counts [3, 6, 9, 12, 15] (default for d=30)" in mat.stderr
    assert "90 samples x 30 features, 3 classes" in mat.stderr
    csv = ufsbench("run", "method=ls", "dataset=heldout_table.csv", *FAST,
                   f"results_dir={res}", cwd=tmp_path)
    assert csv.returncode == 0, csv.stderr
    assert "heldout_table" in csv.stdout and "(label: class)" in csv.stderr
    report = ufsbench("report", f"--results-dir={res}", "--n-runs=2")
    assert report.returncode == 0, report.stderr
    assert "heldout " in report.stdout and "heldout_table" in report.stdout
    df = load_results(res)
    assert set(df["dataset"]) == {"heldout", "heldout_table"} and not df["stale"].any()
    # The same features, so the same selections and scores from either file.
    a = df[df["dataset"] == "heldout"].sort_values(["method", "params", "n_features"])
    b = df[df["dataset"] == "heldout_table"].sort_values(["method", "params", "n_features"])
    assert np.allclose(a["acc_mean"].to_numpy(), b["acc_mean"].to_numpy())
    records = [json.loads(p.read_text()) for p in (res / "heldout_table" / "ls").glob("*.json")]
    digest = load_file_dataset(tmp_path / "heldout_table.csv").checksum
    for rec in records:
        assert rec["key"]["data_checksum"] == digest
        assert rec["data_source"]["path"] == str((tmp_path / "heldout_table.csv").resolve())
        assert rec["selected_names"] == [f"gene_{j}" for j in rec["selected"]]
    # Changing the file makes its records stale, as for registry sets.
    table = pd.read_csv(tmp_path / "heldout_table.csv")
    table.loc[0, "gene_0"] += 1.0
    table.to_csv(tmp_path / "heldout_table.csv", index=False)
    df = load_results(res)
    assert df[df["dataset"] == "heldout_table"]["stale"].all()
    assert not df[df["dataset"] == "heldout"]["stale"].any()


def test_file_formats_and_label_choice(held_out, tmp_path):
    tmp_path, X, y = held_out
    from_csv = load_file_dataset(tmp_path / "heldout_table.csv")
    assert from_csv.feature_names == [f"gene_{j}" for j in range(30)]
    assert np.array_equal(from_csv.X, X) and np.array_equal(from_csv.y, y)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "e.npy", X)
    np.save(tmp_path / "e_labels.npy", y)
    pd.read_csv(tmp_path / "heldout_table.csv").to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    for name in ("d.npz", "e.npy", "t.tsv", "heldout.mat"):
        data = load_file_dataset(tmp_path / name)
        assert np.array_equal(data.X, X) and np.array_equal(data.y, y), name
    by_index = load_file_dataset(tmp_path / "heldout_table.csv", label=3)
    assert by_index.checksum == from_csv.checksum  # column 3 is "class"
    with pytest.raises(DataError, match="column.s. class are not numeric"):
        load_file_dataset(tmp_path / "heldout_table.csv", label="gene_5")
    unlabelled = load_file_dataset(tmp_path / "d.npz", label="none", need_labels=False)
    assert not unlabelled.meta["labelled"]


def test_tables_without_header_or_with_other_separators(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 4)), np.repeat([1, 2], 10)
    np.savetxt(tmp_path / "plain.csv", np.c_[X, y], delimiter=",")
    np.savetxt(tmp_path / "spaces.txt", np.c_[X, y])
    pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "d", "y"]).to_csv(
        tmp_path / "semi.csv", sep=";", index=False)
    for name in ("plain.csv", "spaces.txt", "semi.csv"):
        data = load_file_dataset(tmp_path / name)
        assert np.allclose(data.X, X) and np.array_equal(data.y, y - 1), name
    assert load_file_dataset(tmp_path / "plain.csv").feature_names == ["x0", "x1", "x2", "x3"]
    assert load_file_dataset(tmp_path / "semi.csv").feature_names == ["a", "b", "c", "d"]


def test_default_feature_counts():
    assert default_feature_counts(1000) == [50, 100, 150, 200, 250, 300]
    assert default_feature_counts(120) == [50, 100]
    assert default_feature_counts(61) == [50]
    assert default_feature_counts(60) == [6, 12, 18, 24, 30]
    assert default_feature_counts(8) == [1, 2, 3, 4]
    assert default_feature_counts(4) == [1, 2]
    assert default_feature_counts(1) == [1]
    # A registry entry without feature_counts gets the default, no KeyError.
    conf = {"feature_counts": None, "dataset": {"name": "mine", "kind": "csv"}}
    assert resolve_feature_counts(conf, 1000, "mine")[0] == [50, 100, 150, 200, 250, 300]
    conf["feature_counts"] = [5, 7]
    assert resolve_feature_counts(conf, 1000, "mine")[0] == [5, 7]


def _write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize("name, text, label, expect", [
    ("fake.mat", "a,b,label\n1,2,0\n3,4,1\n", "auto", "not a readable MATLAB .mat file"),
    ("bin.csv", "\0\1\2binary", "auto", "not a readable csv file"),
    ("nolabel.csv", "a,b,c\n1,2,0\n3,4,1\n5,6,1\n", "kind", "has no label column 'kind'"),
    ("text.csv", "a,b,label\n1,x,0\n3,y,1\n5,z,1\n", "auto", "column(s) b are not numeric"),
    ("one.csv", "a,b,label\n1,2,0\n3,4,0\n5,6,0\n", "auto", "has a single value"),
    ("nan.csv", "a,b,label\n1,,0\n3,4,1\n5,6,1\n", "auto", "1 missing or infinite value(s)"),
])
def test_bad_files_say_which_file_and_what_to_do(tmp_path, name, text, label, expect):
    path = _write(tmp_path / name, text)
    with pytest.raises(DataError) as err:
        load_file_dataset(path, label=label)
    message = str(err.value)
    assert expect in message and str(path) in message
    assert "download" not in message and "\n" not in message


def test_bad_file_from_the_cli_is_one_line_exit_2(tmp_path, capsys):
    _write(tmp_path / "fake.mat", "not a mat file\n")
    _write(tmp_path / "one.csv", "a,b,label\n1,2,0\n3,4,0\n5,6,0\n")
    for args in (["dataset=" + str(tmp_path / "fake.mat")],
                 ["dataset=" + str(tmp_path / "one.csv")],
                 ["dataset=" + str(tmp_path / "one.csv"), "dataset.label=zzz"],
                 ["dataset=" + str(tmp_path / "missing.csv")],
                 ["dataset=" + str(tmp_path / "one.csv"), "dataset.label=none"]):
        with pytest.raises(SystemExit) as code:
            main(["run", "method=ls", *FAST, *args])
        assert code.value.code == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("ufsbench: error: ") and len(err.splitlines()) == 1, err
        assert "download" not in err


def test_a_file_named_like_a_registry_set_is_refused(tmp_path):
    path = _write(tmp_path / "jaffe.csv", "a,b,label\n1,2,0\n3,4,1\n")
    with pytest.raises(DataError, match="rename the file or give another name with dataset.name"):
        path_dataset_config(path)
    assert path_dataset_config(path, name="my_jaffe")["name"] == "my_jaffe"
    odd = _write(tmp_path / "my data (v2).csv", "a,b,label\n1,2,0\n3,4,1\n")
    assert path_dataset_config(odd)["name"] == "my_data_v2"  # a name Hydra's grammar takes


def test_dataframe_keeps_its_column_names():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 6)), columns=[f"g{j}" for j in range(6)])
    selector = make_selector("ls", n_features_to_select=2, n_clusters=2).fit(X)
    assert list(selector.feature_names_in_) == list(X.columns)
    kept = selector.get_feature_names_out()
    assert set(kept) <= set(X.columns) and len(kept) == 2
    out = selector.set_output(transform="pandas").transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(kept)
    assert np.array_equal(out.to_numpy(), X[list(kept)].to_numpy())


def test_select_writes_csv_and_json_without_labels(held_out):
    tmp_path, X, _ = held_out
    pd.DataFrame(X, columns=[f"gene_{j}" for j in range(30)]).to_csv(tmp_path / "u.csv",
                                                                      index=False)
    out = ufsbench("select", "method=ls", "dataset=u.csv", "dataset.label=none", "n_features=5",
                   "n_clusters=3", "out=picked", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "wrote picked/u_ls_5.csv" in out.stderr and "wrote picked/u_ls_5.json" in out.stderr
    table = pd.read_csv(tmp_path / "picked" / "u_ls_5.csv")
    assert list(table.columns) == ["rank", "index", "name", "score"] and len(table) == 5
    assert (table["name"] == [f"gene_{i}" for i in table["index"]]).all()
    assert table["score"].is_monotonic_decreasing
    info = json.loads((tmp_path / "picked" / "u_ls_5.json").read_text())
    assert info["n_features"] == 5 and info["n_clusters"] == 3
    assert [r["index"] for r in info["selected"]] == table["index"].tolist()
    selector = make_selector("ls", n_features_to_select=5, n_clusters=3, random_state=0,
                             k=5, weight="heat").fit(X)
    assert sorted(table["index"]) == list(np.flatnonzero(selector.get_support()))
    # No labels and no n_clusters: one line asking for it.
    missing = ufsbench("select", "method=ls", "dataset=u.csv", "dataset.label=none",
                       cwd=tmp_path)
    assert missing.returncode == 2 and "give n_clusters=<K>" in missing.stderr


def test_user_registry_directory(held_out, monkeypatch):
    tmp_path, _, _ = held_out
    user = tmp_path / "my-configs"
    (user / "dataset").mkdir(parents=True)
    (user / "method").mkdir()
    # A user entry of kind csv without feature_counts, and a method config shadowing ls.
    (user / "dataset" / "heldout_csv.yaml").write_text(
        f"name: heldout_csv\nkind: csv\npath: {tmp_path / 'heldout_table.csv'}\n")
    (user / "method" / "ls.yaml").write_text(
        "name: ls\nparams: {k: 5}\ngrid: {weight: [binary]}\ndefault: {weight: binary}\n")
    env = {**__import__("os").environ, "UFSBENCH_CONFIG_DIR": str(user)}
    listing = ufsbench("datasets", env=env)
    assert listing.returncode == 0, listing.stderr
    line = next(x for x in listing.stdout.splitlines() if x.startswith("heldout_csv"))
    assert "user (" in line and "verified" in line
    assert "packaged" in next(x for x in listing.stdout.splitlines() if x.startswith("jaffe"))
    res = tmp_path / "res-user"
    run = ufsbench("run", "method=ls", "dataset=heldout_csv", *FAST, f"results_dir={res}",
                   "baselines=[]", env=env)
    assert run.returncode == 0, run.stderr
    assert "heldout_csv / ls: 1 parameter setting(s)" in run.stderr  # the user's grid
    # The same directory given to Hydra with --config-dir instead.
    env.pop("UFSBENCH_CONFIG_DIR")
    again = ufsbench("run", "--config-dir", str(user), "method=ls", "dataset=heldout_csv",
                     *FAST, f"results_dir={res}", "baselines=[]", env=env)
    assert again.returncode == 0, again.stderr
    assert "1 already in the store, 0 new" in again.stderr


def test_user_entries_of_own_files_never_advise_downloading(tmp_path, monkeypatch):
    user = tmp_path / "cfg"
    (user / "dataset").mkdir(parents=True)
    (user / "dataset" / "mine.yaml").write_text("name: mine\nkind: mat\nfile: mine.mat\n")
    (user / "dataset" / "table.yaml").write_text("name: table\nkind: csv\nfile: table.txt\n")
    monkeypatch.setenv("UFSBENCH_CONFIG_DIR", str(user))
    data = tmp_path / "data"
    data.mkdir()
    (data / "mine.mat").write_text("a,b\n1,2\n")
    for name, expect in (("mine", "not a readable MATLAB .mat file"), ("table", "not found")):
        with pytest.raises(DataError, match=expect) as err:
            load_dataset(name, data_dir=data)
        assert "download" not in str(err.value)
    (data / "table.txt").write_text("a,b,label\n1,2,0\n3,4,1\n5,7,1\n")
    table = load_dataset("table", data_dir=data)  # kind csv: read as a table, not as a .mat
    assert table.feature_names == ["a", "b"] and table.n_classes == 2


def test_parquet_without_an_engine_says_what_to_install(tmp_path):
    path = _write(tmp_path / "t.parquet", "not parquet")
    with pytest.raises(DataError) as err:
        load_file_dataset(path)
    assert str(path) in str(err.value)
    assert "pip install pyarrow" in str(err.value) or "not a readable parquet" in str(err.value)


def test_hydra_searchpath_reaches_the_registry(held_out):
    tmp_path, _, _ = held_out
    user = tmp_path / "sp"
    (user / "dataset").mkdir(parents=True)
    (user / "dataset" / "sp_set.yaml").write_text(
        f"name: sp_set\nkind: file\npath: {tmp_path / 'heldout.mat'}\nfeature_counts: [4]\n")
    run = ufsbench("run", "method=ls", "dataset=sp_set", f"hydra.searchpath=[file://{user}]",
                   *FAST, f"results_dir={tmp_path / 'res-sp'}", "baselines=[]")
    assert run.returncode == 0, run.stderr
    assert "sp_set / ls: 2 parameter setting(s)" in run.stderr
    assert "feature counts [4] (the data set's)" in run.stderr


def test_label_free_rule_covers_a_data_set_outside_the_registry(tmp_path):
    from ufsbench.datasets import Dataset, make_synthetic
    from ufsbench.records import load_results
    from ufsbench.report import fixed_counts, method_config, select_cells
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    s = make_synthetic(n_samples=40, n_features=20, n_informative=3, n_clusters=3,
                       random_state=0)
    data = Dataset(name="my_own_file", X=s.X, y=s.y, checksum="sha256:own")
    tasks = plan_tasks(data, method_config("ls"), [4, 8, 12], EvaluationProtocol(n_runs=2), 0,
                       tmp_path)
    run_sweep(data, tasks, n_jobs=1)
    df = load_results(tmp_path)
    assert fixed_counts(df) == {"my_own_file": 8}     # the middle of the evaluated counts
    cells = select_cells(df, "acc", "default")
    assert len(cells) == 1 and cells.iloc[0]["n_features"] == 8


@pytest.mark.parametrize("stem", ["2024", "nan", "true", "null", "1e5"])
def test_a_file_whose_name_the_override_grammar_reads_as_a_value_runs_under_that_name(
        held_out, stem):
    tmp_path, _, _ = held_out
    (tmp_path / f"{stem}.csv").write_bytes((tmp_path / "heldout_table.csv").read_bytes())
    res = tmp_path / "res"
    out = ufsbench("run", "method=variance", f"dataset=./{stem}.csv", "feature_counts=[3]",
                   "baselines=[]", *FAST, f"results_dir={res}", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith(f"{stem}: ")
    assert [p.name for p in res.iterdir()] == [stem]


def test_select_refuses_labels_that_cannot_give_the_number_of_clusters(tmp_path, capsys):
    # No class column: the last column (continuous, a different value in every row) would be
    # taken as labels, dropped from the features, and set n_clusters = n.
    rng = np.random.default_rng(0)
    table = "\n".join(",".join(f"{v:.6f}" for v in row) for row in rng.random((12, 4)))
    path = _write(tmp_path / "features.csv", "a,b,c,d\n" + table + "\n")
    out = tmp_path / "sel"
    with pytest.raises(SystemExit) as code:
        main(["select", "method=ls", f"dataset={path}", "n_features=2", f"out={out}"])
    err = capsys.readouterr().err.strip()
    assert code.value.code == 2 and len(err.splitlines()) == 1
    assert "'d' has a different value in every row (12)" in err and "dataset.label=none" in err
    assert not out.exists()
    # The fixes it names work: no labels and a cluster count, or a count beside the labels.
    main(["select", "method=ls", f"dataset={path}", "dataset.label=none", "n_clusters=2",
          "n_features=2", f"out={out}"])
    assert "4 features (unlabelled)" in capsys.readouterr().err
    main(["select", "method=ls", f"dataset={path}", "n_clusters=2", "n_features=2", f"out={out}"])
    assert "3 features (labels: d" in capsys.readouterr().err


def test_select_announces_a_fit_its_method_expects_to_be_long(tmp_path, capsys, monkeypatch):
    from ufsbench import runner

    monkeypatch.setattr(runner, "COST_NOTE_SECONDS", 0.0)
    rng = np.random.default_rng(0)
    rows = "\n".join(",".join(f"{v:.6f}" for v in row) + f",{i % 2}"
                     for i, row in enumerate(rng.random((20, 4))))
    path = _write(tmp_path / "small.csv", "a,b,c,d,label\n" + rows + "\n")
    main(["select", "method=dgufs", f"dataset={path}", "n_features=2", f"out={tmp_path / 's'}"])
    err = capsys.readouterr().err
    assert "note: dgufs on small (20 x 4): about 0:00:00 a fit on one core" in err
    assert "1 fit(s) to run" in err


def test_run_names_what_the_fits_behind_its_table_warned_of(tmp_path, capsys):
    # The records keep each fit's warnings; the run sums them up after the table, one line per
    # kind (numbers aside) with how many settings warned so.
    rng = np.random.default_rng(0)
    rows = "\n".join(",".join(f"{v:.6f}" for v in row) + f",{i % 3}"
                     for i, row in enumerate(rng.random((30, 6))))
    path = _write(tmp_path / "tiny.csv", "a,b,c,d,e,f,label\n" + rows + "\n")
    main(["run", "method=ls", f"dataset={path}", "method.params.k=500", "baselines=[]",
          f"results_dir={tmp_path / 'store'}", *FAST])
    err = capsys.readouterr().err.splitlines()
    start = err.index("warnings of the fits behind the table (kept in their records):")
    line = ("  ls: 2 of 2 setting(s) (tiny): UserWarning: LaplacianScore: k=500 exceeds what 30 "
            "samples allow; the graph uses k=29 (every k >= 29 gives this fit)")
    assert err[start + 1] == line
    main(["report", "--results-dir", str(tmp_path / "store")])          # report says it too
    assert line in capsys.readouterr().err.splitlines()


def test_fit_warning_lines_group_warnings_that_differ_only_in_numbers():
    from ufsbench.report import fit_warning_lines

    df = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "method": ["m"] * 4,
                       "params": ["{1}", "{1}", "{2}", "{3}"],
                       "fit_warnings": [("W: rcond = 1e-17",), ("W: rcond = 1e-17",),
                                        ("W: rcond = 2.5e-16",), ()]})
    assert fit_warning_lines(df) == [
        "warnings of the fits behind the table (kept in their records):",
        "  m: 2 of 3 setting(s) (a, b): W: rcond = 1e-17 (and 1 alike)"]
    assert fit_warning_lines(df.assign(fit_warnings=[()] * 4)) == []


def test_fit_warning_lines_leave_stale_records_out():
    from ufsbench.report import fit_warning_lines

    df = pd.DataFrame({"dataset": ["a", "a"], "method": ["m", "m"], "params": ["{1}", "{2}"],
                       "fit_warnings": [("W: old",), ("W: new",)], "stale": [True, False]})
    assert fit_warning_lines(df) == [
        "warnings of the fits behind the table (kept in their records):",
        "  m: 1 of 1 setting(s) (a): W: new"]
