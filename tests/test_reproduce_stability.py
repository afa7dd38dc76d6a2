"""The selection-stability section of the paper reports, read from the committed stability table."""

import pandas as pd
from test_reproduce import tiny_experiment

from ufsbench.reproduce import render


def write_stability(path, rows) -> None:
    columns = ["dataset", "method", "phi", "ci_low", "ci_high", "degenerate_fits"]
    frame = pd.DataFrame(rows, columns=columns).assign(
        params="{}", n_features=50, n_subsamples=20, fraction=0.9, seed=0)
    frame.to_csv(path, index=False)


def test_the_report_shows_each_methods_phi_on_the_papers_data_sets(tmp_path):
    path = tmp_path / "stability.csv"
    write_stability(path, [("synthetic", "ls", 0.8123, 0.7, 0.9, 0),
                           ("synthetic", "ldssl", 0.5, 0.4, 0.6, 3),
                           ("jaffe", "ls", 0.1, 0.0, 0.2, 0)])      # not a data set of the paper
    lines = render.stability_lines(tiny_experiment(), path)
    text = "\n".join(lines)
    assert lines[0] == "## Selection stability"
    table = render.stability_table(tiny_experiment(), pd.read_csv(path)).set_index("method")
    assert list(table.columns) == ["syn"]                  # published id; hars has no estimate
    assert table.loc["ls", "syn"] == "0.81 [0.70, 0.90]"
    assert table.loc["ldssl", "syn"] == "0.50 [0.40, 0.60] (d)"
    assert table.loc["no_such_method", "syn"] == "—"
    assert "allfeatures" not in table.index                # keeps every feature: no selection
    assert "50 selected features over B = 20 fits on 90% row subsamples" in text
    assert "(d): some subsample fits" in text


def test_no_section_without_the_table_or_without_the_papers_data_sets(tmp_path):
    assert render.stability_lines(tiny_experiment(), tmp_path / "absent.csv") == []
    path = tmp_path / "stability.csv"
    write_stability(path, [("jaffe", "ls", 0.1, 0.0, 0.2, 0)])
    assert render.stability_lines(tiny_experiment(), path) == []
