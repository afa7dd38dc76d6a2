"""The static HTML summary: tables and embedded figures in one self-contained page."""

import base64
import re

import pytest
from test_plots import METHODS, PROTOCOL, _small_sets

from ufsbench.cli import main
from ufsbench.errors import UFSBenchError
from ufsbench.html import write_html
from ufsbench.records import load_results
from ufsbench.runner import plan_tasks, run_sweep

ONE_SCFS = {"name": "scfs", "params": {"max_iter": 5, "alpha": 1.0, "beta": 1.0}, "grid": {},
            "default": {}}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """allfeatures, ls and one scfs setting on two synthetic sets; ls on digits (an image set)."""
    root = tmp_path_factory.mktemp("html_store")
    first, second, digits = _small_sets()
    for data in (first, second):
        for cfg in (METHODS["allfeatures"], METHODS["ls"], ONE_SCFS):
            run_sweep(data, plan_tasks(data, cfg, [5, 10], PROTOCOL, 0, root), n_jobs=1)
    run_sweep(digits, plan_tasks(digits, METHODS["ls"], [10], PROTOCOL, 0, root), n_jobs=1)
    return root


@pytest.fixture(scope="module")
def page(store, tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "summary.html"
    assert write_html(load_results(store), path) == path
    return path.read_text()


def test_page_has_every_table_with_best_cells_marked(page):
    for heading in ("ACC (%) — papers&#x27; rule", "ACC (%) — label-free rule",
                    "NMI (%) — papers&#x27; rule", "NMI (%) — label-free rule"):
        assert heading in page
    assert page.count('<table class="dataframe">') == 4 + 2  # 4 report tables + 2 rank tables
    assert "<strong>" in page and "**" not in page


def test_page_embeds_the_figures_as_png(page):
    images = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,([^"]+)"', page)
    titles = [title for title, _ in images]
    # counts (ACC, NMI), 2 CD diagrams, convergence on the 2 synthetic sets, ls's grid on the
    # 3 data sets, pixels on digits.
    assert len(images) == 2 + 2 + 2 + 3 + 1, titles
    assert "Selected features on digits" in titles
    for _, data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"


def test_page_is_self_contained(page):
    assert "<script" not in page
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing fetched from anywhere


def test_undrawable_figure_becomes_a_note(store, tmp_path):
    df = load_results(store)
    page = write_html(df[df.dataset == "digits"], tmp_path / "p.html").read_text()
    assert "No stored record has an objective history" in page
    assert "Objective per iteration" not in page
    assert "ACC ranks: ranking needs at least 2 methods" in page


def test_report_html_from_the_command_line(store, tmp_path, capsys):
    out = tmp_path / "sub" / "summary.html"
    main(["report", "--results-dir", str(store), "--dataset", "digits", "--html", str(out)])
    assert out.is_file() and f"wrote {out}" in capsys.readouterr().err
    assert "synthetic" not in out.read_text()


def test_missing_results_are_a_clear_error(tmp_path, capsys):
    with pytest.raises(UFSBenchError, match="no results to summarise"):
        write_html(load_results(tmp_path), tmp_path / "x.html")
    with pytest.raises(SystemExit) as exc:
        main(["report", "--results-dir", str(tmp_path / "none"), "--html", str(tmp_path / "x")])
    assert exc.value.code == 2
    assert "ufsbench: error: no results to summarise" in capsys.readouterr().err


def test_page_names_a_non_default_protocol(page):
    """The fixture's records have 3 K-means runs, not the default 20: the page says so."""
    assert "Evaluation protocol not the default: n_runs=3 (default 20)." in page


def test_rank_tables_show_two_decimals_throughout(page):
    """Mean ranks such as 2.5 and 3 print as 2.50 and 3.00, never mixed precision in a column."""
    tables = re.findall(r"<th>mean rank</th>(.*?)</tr>", page, flags=re.S)
    assert tables
    for row in tables:
        cells = re.findall(r"<td>([^<]*)</td>", row)
        assert cells and all(re.fullmatch(r"\d+\.\d\d", c) for c in cells), cells
