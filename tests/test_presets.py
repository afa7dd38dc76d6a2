"""Presets: named parameter sets from a method's config, applied by make_selector and by runs."""

from pathlib import Path

import pytest
import yaml

from ufsbench.errors import UFSBenchError
from ufsbench.methods import make_selector
from ufsbench.paths import config_dir
from ufsbench.presets import apply_preset, method_presets
from ufsbench.run_config import method_config_for
from ufsbench.tasks import expand_grid


@pytest.fixture
def ls_with_preset(tmp_path, monkeypatch):
    """A user config of ls (shadowing the packaged one) with a preset fixing k and the grid axis
    ``weight``."""
    cfg = yaml.safe_load((config_dir() / "method" / "ls.yaml").read_text())
    cfg["presets"] = {"released": {"k": 3, "weight": "binary"}}
    (tmp_path / "method").mkdir()
    (tmp_path / "method" / "ls.yaml").write_text(yaml.safe_dump(cfg))
    monkeypatch.setenv("UFSBENCH_CONFIG_DIR", str(tmp_path))
    return tmp_path


def test_make_selector_starts_from_the_preset_and_overrides_win(ls_with_preset):
    assert make_selector("ls", preset="released").get_params()["k"] == 3
    sel = make_selector("ls", preset="released", k=7)
    assert (sel.k, sel.weight) == (7, "binary")


def test_a_preset_fixes_params_and_collapses_the_grid_axes_it_names(ls_with_preset):
    cfg = method_config_for("ls")
    assert len(expand_grid(cfg)) == 2                       # the weight axis: heat, binary
    cfg["preset"] = "released"
    assert expand_grid(cfg) == [{"k": 3, "weight": "binary"}]
    assert apply_preset(cfg)["grid"] == {}


def test_a_config_file_is_parsed_once_and_reread_when_it_changes(ls_with_preset):
    """Method configs are cached per version of their file: an edit is seen by the next call,
    and a caller changing the returned dict changes nothing for the next one."""
    path = ls_with_preset / "method" / "ls.yaml"
    cfg = method_config_for("ls")
    cfg["presets"]["released"]["k"] = 99                      # the caller's copy only
    assert method_presets("ls")["released"]["k"] == 3
    edited = yaml.safe_load(path.read_text())
    edited["presets"]["released"]["k"] = 11
    path.write_text(yaml.safe_dump(edited))
    assert make_selector("ls", preset="released").k == 11


def test_a_method_config_is_found_as_the_group_listing_finds_it(ls_with_preset, tmp_path_factory):
    """The direct lookup of a method's file is the listing's entry, shadowing included: the
    highest-precedence user directory wins, a name that is not a plain file stem finds nothing."""
    from ufsbench.datasets.config_dirs import config_sources, group_files, option_file

    later = tmp_path_factory.mktemp("later")
    (later / "method").mkdir()
    (later / "method" / "ls.yaml").write_text((ls_with_preset / "method" / "ls.yaml").read_text())
    sources = (*config_sources(), (later, True))
    listed = group_files("method", sources)
    for name, (path, _) in listed.items():
        assert option_file("method", name, sources) == path
    assert option_file("method", "ls", sources) == later / "method" / "ls.yaml"
    assert option_file("method", "ls") == ls_with_preset / "method" / "ls.yaml"
    for odd in ("", "no_such_method", "../method/ls", "method/ls"):
        assert option_file("method", odd, sources) is None


def test_an_unknown_preset_is_refused_in_one_line_naming_the_known_ones(ls_with_preset):
    with pytest.raises(UFSBenchError, match="no preset 'printed'; its presets: released"):
        make_selector("ls", preset="printed")


def test_every_packaged_preset_names_only_parameters_its_selector_takes():
    for path in sorted(Path(config_dir(), "method").glob("*.yaml")):
        name = path.stem
        for preset, values in method_presets(name).items():
            make_selector(name, preset=preset)._validate_params()   # names and constraints
            assert values, f"{name} preset {preset} is empty"
