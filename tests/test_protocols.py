"""One evaluation protocol per table: records of different K-means starts, run counts, seeds or
NMI normalisations are never mixed into one cell (records.one_protocol, report.protocol_lines)."""

import pandas as pd
import pytest

from ufsbench.errors import UFSBenchError
from ufsbench.records import PROTOCOL_COLUMNS, default_protocol, one_protocol
from ufsbench.report import report_tables

DEFAULT = {"seed": 0, "n_runs": 20, "kmeans_init": "random", "kmeans_max_iter": 100,
           "nmi_normalisation": "max"}


def records(*protocols, acc=(0.5,)):
    """One tidy record per (protocol, acc): the same cell (data set, method, count)."""
    assert len(protocols) == len(acc)
    rows = []
    for protocol, value in zip(protocols, acc):
        rows.append({"dataset": "digits", "method": "ls", "params": '{"weight": "heat"}',
                     "n_features": 10, "scoring": "kmeans", "acc_mean": value, "acc_std": 0.0,
                     "nmi_mean": value, "nmi_std": 0.0, "acc_runs": [value], "nmi_runs": [value],
                     "stale": False, "reconstructed": False, "param_weight": "heat",
                     **{**DEFAULT, **protocol}})
    return pd.DataFrame(rows)


def test_default_protocol_is_the_config():
    assert default_protocol() == DEFAULT


def test_one_protocol_keeps_a_single_one_whatever_it_is():
    df = records({"n_runs": 3})
    chosen, note = one_protocol(df)
    assert len(chosen) == 1 and note == ""


def test_the_default_wins_when_several_are_stored_and_the_rest_is_named():
    df = records({}, {"kmeans_init": "k-means++"}, acc=(0.5, 0.9))
    chosen, note = one_protocol(df)
    assert chosen["acc_mean"].tolist() == [0.5]       # not the better k-means++ cell
    assert "1 record(s) of other evaluation protocols left out" in note
    assert "kmeans_init=k-means++" in note and "shown: seed=0, n_runs=20, kmeans_init=random" in note
    plus, _ = one_protocol(df, {"kmeans_init": "k-means++"})
    assert plus["acc_mean"].tolist() == [0.9]


def test_several_protocols_without_the_default_ask_for_a_choice():
    df = records({"seed": 1}, {"seed": 2}, acc=(0.5, 0.6))
    with pytest.raises(UFSBenchError, match="2 evaluation protocols .*seed=1.*seed=2.*none with "
                                            "the default seed; pick one with --seed$"):
        one_protocol(df)
    chosen, note = one_protocol(df, {"seed": 2})
    assert chosen["seed"].tolist() == [2] and "seed=1" in note
    with pytest.raises(UFSBenchError, match="unknown protocol field"):
        one_protocol(df, {"init": "random"})


def test_a_table_refuses_mixed_protocols_and_names_a_non_default_one():
    mixed = records({}, {"kmeans_max_iter": 300}, acc=(0.5, 0.9))
    with pytest.raises(UFSBenchError, match="2 evaluation protocols"):
        report_tables(mixed, metrics=("acc",), rules=("paper",))
    text = report_tables(records({"kmeans_init": "k-means++"}), metrics=("acc",),
                         rules=("paper",))
    assert text.startswith("Evaluation protocol not the default: kmeans_init=k-means++ "
                           "(default random).")
    assert not report_tables(records({}), metrics=("acc",), rules=("paper",)).startswith(
        "Evaluation protocol")


def test_protocol_columns_are_load_results_columns(tmp_path):
    """Records carry their K-means start and iteration cap into the tidy frame."""
    from ufsbench.datasets import load_dataset
    from ufsbench.records import load_results
    from ufsbench.report import method_config
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    data = load_dataset("digits")
    for init in ("random", "k-means++"):
        protocol = EvaluationProtocol(n_runs=2, kmeans_init=init, kmeans_max_iter=50)
        tasks = plan_tasks(data, method_config("allfeatures"), [64], protocol, 0, str(tmp_path))
        run_sweep(data, tasks, n_jobs=1, progress=False)
    df = load_results(tmp_path)
    assert set(PROTOCOL_COLUMNS) <= set(df.columns)
    assert sorted(df["kmeans_init"]) == ["k-means++", "random"]
    assert set(df["kmeans_max_iter"]) == {50}
    chosen, note = one_protocol(df, {"n_runs": 2})
    assert chosen["kmeans_init"].tolist() == ["random"] and "k-means++" in note


def test_frames_with_repeated_index_labels_are_split_by_row():
    """Two frames concatenated without a new index: labels repeat, rows must still be told apart."""
    df = pd.concat([records({}), records({"kmeans_init": "k-means++"}, acc=(0.9,))])
    assert list(df.index) == [0, 0]
    chosen, note = one_protocol(df)
    assert chosen["acc_mean"].tolist() == [0.5] and note.startswith("1 record(s)")
