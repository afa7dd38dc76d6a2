"""The ``released`` presets against the outputs of the authors' own code (shared reference cases).

Every case file of the shared reference folder is a test: our ``released`` fit must match the
authors' top-50 and top-100 sets (see :mod:`ufsbench.conformance` for the bar), or, where the
method's module documents a degeneracy, the weaker property that holds.
"""

import json

import numpy as np
import pytest

from ufsbench.conformance import (
    CUTS,
    CaseResult,
    case_files,
    check_case,
    compare_sets,
    fit_case,
    load_case,
    mapping,
    reference_dir,
)

REFERENCE = reference_dir()


def _param(path):
    # a method's mapping may list cases too costly for the default suite (SLOW_CASES): they run
    # with `pytest -m slow`; every method keeps at least one case in the default suite
    module = mapping(path.name.split("__")[0])
    slow = path.stem in getattr(module, "SLOW_CASES", ())
    return pytest.param(path, id=path.stem, marks=[pytest.mark.slow] if slow else [])


CASES = [_param(p) for p in case_files(REFERENCE)] if REFERENCE else []


@pytest.mark.skipif(not CASES, reason="no shared reference cases (set UFSBENCH_DATA beside "
                                      "reference-outputs or UFSBENCH_REFERENCE_OUTPUTS)")
@pytest.mark.parametrize("path", CASES)
def test_released_preset_matches_the_authors_code(path):
    case = load_case(path)
    if mapping(case["method"]) is None:
        pytest.skip(f"no released mapping for {case['method']}")
    known = getattr(mapping(case["method"]), "KNOWN_DIFFERENCES", {}).get(case["case_id"])
    if known is not None:
        _known_difference(case, known)
        return
    result = check_case(case)
    assert isinstance(result, CaseResult)
    assert result.match, f"{result.case_id}: Jaccard {result.jaccard} ({result.how})"


def _known_difference(case, known):
    # a documented difference (the mapping's KNOWN_DIFFERENCES: the parts of its weaker property
    # that fail) is an expected failure only there: every other part must hold, and the case
    # passes outright once the documented parts hold too
    module = mapping(case["method"])
    held, how = module.property_parts(case, dict.fromkeys(CUTS, fit_case(case)))
    failing = {part for part, ok in held.items() if not ok}
    assert held and failing <= set(known), f"{case['case_id']}: {how}"
    if failing:
        pytest.xfail(f"known difference: {how}")


def _case(ranking, selected=None, ties=None, sensitivity=None):
    return {"ranking": ranking, "selected": selected, "ties": ties or {},
            "numerical_sensitivity": sensitivity}


def test_sets_must_agree_exactly_without_ties_or_round_off():
    case = _case(list(range(200)))
    ok = {50: set(range(50)), 100: set(range(100))}
    assert compare_sets(case, ok)[1]
    one_off = {50: set(range(49)) | {150}, 100: set(range(100))}
    scores, match, _ = compare_sets(case, one_off)
    assert not match and scores[50] == pytest.approx(49 / 51)


def test_a_tie_group_across_the_cut_is_compared_as_a_group():
    group = {"rank_start": 40, "rank_end": 59, "members": list(range(40, 60))}
    case = _case(list(range(200)), ties={"groups_in_top100": [group]})
    # any 10 of the 20 tied features complete the top 50
    ours = {50: set(range(40)) | set(range(50, 60)), 100: set(range(100))}
    assert compare_sets(case, ours)[1]
    ours[50] = set(range(40)) | set(range(50, 59)) | {150}          # one too few of the group
    assert not compare_sets(case, ours)[1]


def test_the_bar_falls_to_the_authors_own_overlap_when_their_ranking_moves():
    sensitivity = {"identical_ranking": False, "top50_overlap": 40, "top100_overlap": 100}
    case = _case(list(range(200)), sensitivity=sensitivity)
    ours = {50: set(range(8, 58)), 100: set(range(100))}             # 42 of 50 shared
    assert compare_sets(case, ours)[1]
    ours[50] = set(range(15, 65))                                    # 35 of 50 shared
    assert not compare_sets(case, ours)[1]


def test_the_command_reports_every_case_and_fails_unless_all_match(tmp_path, capsys):
    from ufsbench.cli import main

    (tmp_path / "nomethod__jaffe__x.json").write_text(json.dumps(
        {"case_id": "nomethod__jaffe__x", "method": "nomethod", "dataset": "jaffe"}))
    with pytest.raises(SystemExit) as exit_:
        main(["conformance", str(tmp_path)])
    assert exit_.value.code == 1
    out = capsys.readouterr().out
    assert "no released mapping" in out and out.strip().endswith("0/1 cases match")


def test_an_empty_folder_is_refused_in_one_line(tmp_path, capsys):
    from ufsbench.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["conformance", str(tmp_path)])
    assert exit_.value.code == 2
    assert "no case files" in capsys.readouterr().err


class _Ranked:
    """A stand-in fit whose ranking is given (best first)."""

    def __init__(self, ranking):
        self.ranking = list(ranking)
        d = len(self.ranking)
        self.scores_ = np.empty(d)
        self.scores_[self.ranking] = np.sqrt(np.linspace(1.0, 0.5, d))

    def top_features(self, m):
        return np.asarray(self.ranking[:m])


def _shift(ranking, top, k):
    # the first `top` ranks keep all but k of their features: k from just below the cut move in
    return ranking[:top - k] + ranking[top:top + k] + ranking[top - k:top] + ranking[top + k:]


def test_rufs_round_off_bar_is_the_least_overlap_of_the_authors_reruns():
    from ufsbench.conformance import rufs

    case = {"case_id": "rufs__srbct__demo_defaults", "ranking": list(range(300))}
    bars = rufs.floors(case["case_id"])
    assert bars == {50: (25, 34), 100: (60, 72)}
    at_bar = _shift(_shift(list(range(300)), 50, 50 - 25), 100, 100 - 60)
    assert rufs.weaker_property(case, dict.fromkeys(CUTS, _Ranked(at_bar)))[0]
    one_short = _shift(list(range(300)), 50, 50 - 24)
    held, how = rufs.weaker_property(case, dict.fromkeys(CUTS, _Ranked(one_short)))
    assert not held and "top 50: 24 shared" in how
    assert rufs.weaker_property({**case, "case_id": "rufs__jaffe__demo_defaults"}, {}) == (True, "")


def test_sogfs_parts_name_each_level_that_falls_below_the_authors_reruns():
    from ufsbench.conformance import sogfs

    d = 676
    case = {"case_id": "sogfs__jaffe__g1_m338", "params": {"d_proj": 338, "gamma": 1},
            "scores": np.linspace(1.0, 0.5, d).tolist()}
    assert set(sogfs.floors(case["case_id"])) == {50, 100, 338}
    held, _ = sogfs.property_parts(case, {50: _Ranked(range(d))})
    assert held == {50: True, 100: True, 338: True}
    held, how = sogfs.property_parts(case, {50: _Ranked(_shift(list(range(d)), 50, 50 - 38))})
    assert held == {50: False, 100: True, 338: True} and "top 50: 38 shared" in how
    assert not sogfs.weaker_property(case, {50: _Ranked(_shift(list(range(d)), 100, 23))})[0]


def test_the_command_sums_up_the_fits_warnings_in_one_line_each(tmp_path, capsys, monkeypatch):
    # The presets keep the authors' iteration caps: a warning per fit would flood the terminal.
    import warnings as warnings_module

    from sklearn.exceptions import ConvergenceWarning

    import ufsbench.conformance as conformance
    from ufsbench.cli import main

    class Matched:
        match, case_id = True, "dgufs__jaffe__x"

        def row(self):
            return ["dgufs", "jaffe", "x", 1.0, 1.0, "match", "exact"]

    def check_case(case, data_dir=None):
        for _ in range(2):
            warnings_module.warn("DGUFS stopped at max_iter=5", ConvergenceWarning, stacklevel=2)
        return Matched()

    monkeypatch.setattr(conformance, "check_case", check_case)
    for name in ("dgufs__jaffe__x", "dgufs__jaffe__y"):
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"case_id": name, "method": "dgufs", "dataset": "jaffe"}))
    with pytest.raises(SystemExit) as exit_:
        main(["conformance", str(tmp_path)])
    assert exit_.value.code == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "max_iter=5" in line]
    assert warned == ["ufsbench: 4 warning(s) from the fits: ConvergenceWarning: DGUFS stopped "
                      "at max_iter=5"]
