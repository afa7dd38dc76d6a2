"""Runs at a method's preset are rows of their own in the report, with a label-free cell at the
preset's default setting (also when the run changed one of the preset's values)."""

import json

import pytest

from ufsbench import plots, stats
from ufsbench.datasets import make_synthetic
from ufsbench.records import load_results
from ufsbench.report import is_default_setting, preset_parts, select_cells
from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

PROTOCOL = EvaluationProtocol(n_runs=3)
LS = {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
      "default": {"weight": "heat"}}
RELEASED = {**LS, "preset": "released"}          # the packaged preset: k 5, heat, mean distance
CHANGED = {**RELEASED, "presets": {"released": {"k": 3, "weight": "heat",
                                                "sigma": "mean_distance"}}}
COUNTS = [5, 10, 20]


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    root = tmp_path_factory.mktemp("store")
    for seed in (0, 1):
        data = make_synthetic(n_samples=90, n_features=30, random_state=seed)
        data.name = f"synthetic_{seed}"
        for cfg in (LS, RELEASED, CHANGED):
            run_sweep(data, plan_tasks(data, cfg, COUNTS, PROTOCOL, 0, root), n_jobs=1)
    return load_results(root)


def test_records_name_the_preset_and_the_values_a_run_changed(frame):
    assert sorted(frame["preset"].unique()) == ["", "released", "released with k=3"]
    changed = frame[frame["preset"] == "released with k=3"]
    assert {json.loads(p)["k"] for p in changed["params"]} == {3}


@pytest.mark.parametrize("rule", ["paper", "label_free"])
def test_each_preset_is_a_row_of_its_own_chosen_among_its_own_settings(frame, rule):
    cells = select_cells(frame, "acc", rule)
    assert sorted(cells["variant"]) == sorted(2 * ["", "released", "released with k=3"])
    for cell in cells.itertuples(index=False):
        own = frame[(frame["preset"] == cell.variant) & (frame["dataset"] == cell.dataset)]
        if rule == "paper":
            assert cell.value == own["acc_mean"].max()
        else:  # the middle count, at the default of the config or of the (changed) preset
            at_default = [is_default_setting("ls", p, cell.variant) for p in own["params"]]
            default = own[(own["n_features"] == 10).to_numpy() & at_default]
            assert len(default) == 1 and cell.value == default["acc_mean"].iloc[0]


def test_the_label_free_setting_of_a_preset_is_its_own_default():
    native = json.dumps({"k": 5, "weight": "heat"}, sort_keys=True, separators=(",", ":"))
    released = json.dumps({"k": 5, "weight": "heat", "sigma": "mean_distance"}, sort_keys=True,
                          separators=(",", ":"))
    changed = released.replace('"k":5', '"k":3')
    assert is_default_setting("ls", native) and not is_default_setting("ls", released)
    assert is_default_setting("ls", released, "released")
    assert not is_default_setting("ls", native, "released")
    assert not is_default_setting("ls", changed, "released")
    assert is_default_setting("ls", changed, "released with k=3")


def test_preset_labels_are_read_back():
    assert preset_parts("released with max_iter=20, k=3") == ("released", ["max_iter", "k"])
    assert preset_parts("released") == ("released", [])
    assert preset_parts("") == ("", []) and preset_parts(None) == ("", [])


SERIES = sorted(["ls", "ls (released)", "ls (released with k=3)"])


def test_label_free_curves_have_a_line_per_preset_each_at_its_own_default(frame):
    points = plots.per_count_values(frame, "acc", rule="label_free")
    for (dataset, _series), line in points.groupby(["dataset", "series"]):
        assert list(line["n_features"]) == COUNTS
        preset = line["variant"].iloc[0]
        own = frame[(frame["dataset"] == dataset) & (frame["preset"] == preset)]
        at_default = own[[is_default_setting("ls", p, preset) for p in own["params"]]]
        assert list(line["value"]) == list(at_default.sort_values("n_features")["acc_mean"])
    assert sorted(points["series"].unique()) == SERIES


@pytest.mark.parametrize("rule", ["paper", "label_free"])
def test_rank_tests_rank_each_preset_as_a_method_of_its_own(frame, rule):
    test = stats.rank_methods(frame, "acc", rule)
    assert sorted(test.mean_ranks.index) == SERIES
