"""Checks of a ``ufsbench run`` configuration before anything is computed.

Every key of the composed Hydra config that the run reads (runner, evaluation, report, method
parameters and grids, feature counts) is checked here, so that a bad value ends the run with one
line and exit code 2 before the first fit, and the result store stays exactly as it was. The
method parameters are checked against each selector's declared ``_parameter_constraints`` for
every grid point (:func:`ufsbench.methods.base.check_setting`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from omegaconf import DictConfig, ListConfig, OmegaConf

from ufsbench.errors import UFSBenchError


def config_dict(node: DictConfig | ListConfig, what: object, resolve: bool = True) -> dict[str, Any]:
    """An OmegaConf config as a plain ``dict`` (interpolations resolved unless ``resolve`` is
    False); one line naming ``what`` (a file, a config) when it is not a mapping."""
    plain = OmegaConf.to_container(node, resolve=resolve)
    if not isinstance(plain, dict):
        raise UFSBenchError(f"{what} must be a mapping of keys to values, not "
                            f"{type(plain).__name__}")
    # the keys are the names a YAML file or a command line gives
    return cast(dict[str, Any], plain)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(name: str, value, minimum: int | None = None, none_ok: bool = False) -> None:
    if none_ok and value is None:
        return
    if not _is_int(value) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise UFSBenchError(f"{name}={value!r} must be an integer{bound}"
                            f"{' or null' if none_ok else ''}, e.g. {name}={max(minimum or 0, 1)}")


def _choice(name: str, value, choices) -> None:
    if value not in choices:
        raise UFSBenchError(f"{name}={value!r} is not one of: {', '.join(map(str, choices))}")


def _bool(name: str, value, none_ok: bool = False) -> None:
    if not (isinstance(value, bool) or (none_ok and value is None)):
        extra = ", null" if none_ok else ""
        raise UFSBenchError(f"{name}={value!r} must be true or false{extra}")


def _text(name: str, value) -> None:
    if value is not None and not isinstance(value, str):
        raise UFSBenchError(f"{name}={value!r} must be a path or address (text) or null")


def _choices(name: str, values, choices) -> list:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise UFSBenchError(f"{name}={values!r} must be a list, e.g. {name}=[{choices[0]}]")
    for value in values:
        if value not in choices:
            raise UFSBenchError(f"{name}: {value!r} is not one of: {', '.join(choices)}")
    return list(values)


def check_evaluation(evaluation: Mapping) -> None:
    """The ``evaluation`` keys: K-means runs, starts, iteration cap, NMI normalisation, scoring."""
    from ufsbench.evaluation import KMEANS_INITS, NMI_NORMALISATIONS
    from ufsbench.runner import SCORINGS

    _int("evaluation.n_runs", evaluation.get("n_runs"), minimum=1)
    _choice("evaluation.kmeans_init", evaluation.get("kmeans_init"), KMEANS_INITS)
    _int("evaluation.kmeans_max_iter", evaluation.get("kmeans_max_iter"), minimum=1)
    _choice("evaluation.nmi", evaluation.get("nmi"), NMI_NORMALISATIONS)
    _choices("evaluation.scoring", evaluation.get("scoring"), SCORINGS)


def check_report(report: Mapping) -> None:
    from ufsbench.report import RULE_ALIASES, RULES, SUMMARIES

    _choice("report.summary", report.get("summary"), list(SUMMARIES))
    _choices("report.rules", report.get("rules"), [*RULES, *RULE_ALIASES])


def check_runner(conf: Mapping) -> None:
    """Seed, parallelism, launcher, paths and flags of the run."""
    from ufsbench.methods import available_methods
    from ufsbench.runner import BACKENDS

    _int("seed", conf.get("seed"), minimum=0)
    _int("n_jobs", conf.get("n_jobs"), none_ok=True)
    if conf.get("n_jobs") == 0:
        raise UFSBenchError("n_jobs=0 runs nothing; give n_jobs=-1 (all cores) or a positive "
                            "number of parallel fits")
    _bool("progress", conf.get("progress"), none_ok=True)
    _bool("download", conf.get("download"))
    _bool("skip_failed", conf.get("skip_failed", False))
    _choice("launcher", conf.get("launcher", "local"), BACKENDS)
    for name in ("scheduler", "data_dir", "results_dir"):
        _text(name, conf.get(name))
    if conf.get("baselines") is not None:
        _choices("baselines", conf["baselines"], available_methods())


def check_feature_counts(counts, n_features: int, dataset: str) -> list[int]:
    """User-given feature counts: positive integers, none above the data set's d."""
    if isinstance(counts, str) or not isinstance(counts, Sequence) or not counts:
        raise UFSBenchError(f"feature_counts={counts!r} must be a non-empty list of positive "
                            f"integers, e.g. feature_counts=[50,100]")
    for m in counts:
        _int("feature_counts", m, minimum=1)
    too_many = sorted(m for m in counts if m > n_features)
    if too_many:
        raise UFSBenchError(f"feature_counts {too_many} exceed the {n_features} features of "
                            f"{dataset}; give counts up to {n_features}")
    return list(counts)


def check_method_settings(method_cfg: Mapping) -> int:
    """Every setting of a method config (params x grid + default) against the selector's
    declared constraints, without data. Returns the number of settings."""
    from ufsbench.methods.base import check_setting
    from ufsbench.runner import expand_grid

    check_method_config_keys(method_cfg)
    settings = expand_grid(dict(method_cfg))
    for setting in settings:
        try:
            check_setting(method_cfg["name"], setting)
        except UFSBenchError as exc:
            raise UFSBenchError(f"method {method_cfg['name']} at {setting}: {exc}") from None
    return len(settings)


def check_run(conf: Mapping, methods: list[Mapping]) -> None:
    """Every data-free key of a composed ``ufsbench run`` config and every method setting."""
    check_runner(conf)
    check_evaluation(conf["evaluation"])
    check_report(conf["report"])
    for method_cfg in methods:
        check_method_settings(method_cfg)


def method_config_for(name: str) -> dict[str, Any]:
    """The method config ``method=<name>`` chooses, the user's shadowing the packaged one
    (``{"name": name}`` when there is none: the selector's defaults)."""
    from ufsbench.datasets.config_dirs import option_file

    path = option_file("method", name)
    if path is None:
        return {"name": name}
    stat = path.stat()
    return copy.deepcopy(_method_config_file(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=256)
def _method_config_file(path: str, mtime_ns: int, size: int) -> dict[str, Any]:
    """A method config file as a plain dict, parsed once per version of the file (keyed by
    its modification time and size): ``make_selector(..., preset=...)`` would otherwise parse
    YAML on every call, 5-15 ms, more than many fits on small data."""
    return config_dict(OmegaConf.load(path), path)


def resolve_feature_counts(conf: Mapping, n_features: int, dataset: str) -> tuple[list[int], str]:
    """The run's feature counts and where they come from: ``feature_counts=`` (checked), the
    data set's own, else the default for its d (the papers' 50..300 below d; 10..50 % of d for
    d <= 60)."""
    from ufsbench.datasets import dataset_feature_counts

    if conf.get("feature_counts") is not None:
        return check_feature_counts(conf["feature_counts"], n_features, dataset), "feature_counts="
    own = (conf.get("dataset") or {}).get("feature_counts")
    counts = dataset_feature_counts(conf.get("dataset"), n_features)
    return counts, "the data set's" if own else f"default for d={n_features}"


# -- override keys, before Hydra composes ----------------------------------------------------
#: Top-level keys Hydra itself owns or that choose a config group.
_GROUPS = ("method", "dataset")


def _composed_tree(overrides: list[str], root: Path | str | None = None) -> dict[str, Any]:
    """config.yaml with the chosen (or default) method and data-set configs in place (from the
    config tree ``root``, by default the packaged one); of a sweep's options (``method=a,b``),
    the first."""
    from ufsbench.paths import config_dir

    root = Path(root or config_dir())
    tree = config_dict(OmegaConf.load(root / "config.yaml"), root / "config.yaml", resolve=False)
    defaults = tree.pop("defaults", [])
    for group, options in _group_options(overrides, defaults).items():
        path = root / group / f"{options[0]}.yaml"
        tree[group] = OmegaConf.to_container(OmegaConf.load(path)) if path.is_file() else None
    return tree


def _group_options(overrides: list[str], defaults: list) -> dict[str, list[str]]:
    """The options a command line (else config.yaml's defaults) chooses for each config group,
    every option of a sweep (``method=a,b``)."""
    chosen: dict[str, list[str]] = {}
    for entry in defaults:
        if isinstance(entry, dict):
            chosen.update({k: [v] for k, v in entry.items() if k in _GROUPS})
    for item in overrides:
        name, _, value = item.partition("=")
        if name in _GROUPS and value:
            chosen[name] = [option.strip() for option in value.split(",")]
    return chosen


def check_override_keys(overrides: list[str], root: Path | str | None = None) -> None:
    """An override ``a.b=v`` of a key the config does not have (without ``+``) is refused with
    one line naming the key and the keys that do exist there (``root``: the config tree Hydra
    composes from, by default the packaged one)."""
    plain = [o for o in overrides if "=" in o and not o.startswith(("+", "~", "hydra."))
             and not o.startswith("-")]
    added = [o[1:] for o in overrides if "=" in o and o.startswith("+") and
             not o.startswith(("++", "+hydra."))]
    if not plain and not added:
        return
    _check_method_overrides(overrides, root)
    tree = _composed_tree(overrides, root)
    for item in added:
        name = item.partition("=")[0]
        if _has_key(tree, name.split(".")):
            raise UFSBenchError(f"{name!r} already exists: write {item} without the +")
    for item in plain:
        path = item.partition("=")[0].split(".")
        node: Any = tree
        walked: list[str] = []
        for part in path:
            node = {} if node is None else node
            if not isinstance(node, dict):
                break  # a value that is not a mapping: Hydra reports the type itself
            if part not in node:
                where = ".".join(walked) or "the top level"
                known = ", ".join(sorted(node)) if node else "none"
                add = f"+{'.'.join(path)}={item.partition('=')[2]}"
                raise UFSBenchError(f"unknown key {'.'.join(path)!r}: the keys at {where} are "
                                    f"{known} (to add a new key, write {add})")
            node = node[part]
            walked.append(part)


def _has_key(tree: dict, path: list[str]) -> bool:
    node = tree
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


# -- method configs: their keys, and overrides of their parameters ---------------------------
#: The keys of a method config (``configs/method/<name>.yaml``).
METHOD_CONFIG_KEYS = ("name", "params", "grid", "default", "preset", "presets", "variant",
                      "scoring")
#: The parts of a method config whose keys are the selector's parameters.
PARAMETER_SECTIONS = ("params", "grid", "default")


def where_to_set(method_cfg: Mapping, parameter: str, value: object = "<value>") -> str:
    """The override that sets ``parameter`` of a method config: its grid axis where it has one
    (one value fixes it), else its fixed value."""
    if parameter in (method_cfg.get("grid") or {}):
        return f"method.grid.{parameter}={value}"
    added = "" if parameter in (method_cfg.get("params") or {}) else "+"
    return f"{added}method.params.{parameter}={value}"


def check_method_config_keys(method_cfg: Mapping) -> None:
    """A method config holds only :data:`METHOD_CONFIG_KEYS`: any other key would be ignored
    by the run (a parameter written at the top level, a misspelt ``grid``)."""
    unknown = [key for key in method_cfg if key not in METHOD_CONFIG_KEYS]
    if unknown:
        raise UFSBenchError(_not_a_config_key(method_cfg, unknown[0]))


def _not_a_config_key(method_cfg: Mapping, key: str, value: object = "<value>") -> str:
    name = method_cfg.get("name")
    if key in _parameters_of(name):
        return (f"unknown key 'method.{key}': {key} is a parameter of {name}; set it with "
                f"{where_to_set(method_cfg, key, value)}")
    return f"unknown key 'method.{key}': a method config has the keys {', '.join(METHOD_CONFIG_KEYS)}"


def _parameters_of(name) -> list[str]:
    """The constructor parameters of method ``name``; none for a name no selector has."""
    from ufsbench.methods import available_methods
    from ufsbench.methods.base import method_parameters

    return method_parameters(name) if name in available_methods() else []


def _override_parts(item: str) -> tuple[str, list[str], str]:
    """(prefix, key path, value) of an override: prefix "", "+", "++" or "~"."""
    prefix = next((p for p in ("~", "++", "+") if item.startswith(p)), "")
    name, _, value = item[len(prefix):].partition("=")
    return prefix, name.split("."), value


def _check_method_overrides(overrides: list[str], root: Path | str | None = None) -> None:
    """Overrides of a method's parameters that the run would ignore are refused, naming the
    override that does what they ask, for each method the command line chooses:

    * a parameter at the config's top level (``method.alpha=10``), which no fit reads;
    * a name the selector has no parameter of (``method.params.alfa``);
    * a fixed value of a grid axis (``method.params.alpha=10``), which the grid overrides;
    * a value the chosen preset sets (``method.preset=released method.params.max_iter=20``),
      which the preset overrides: the preset's own value can be changed
      (``method.presets.released.max_iter=20``).
    """
    from ufsbench.paths import config_dir

    root = Path(root or config_dir())
    edits = [_override_parts(o) for o in overrides if "=" in o or o.startswith("~")]
    edits = [(prefix, path, value) for prefix, path, value in edits
             if path[0] == "method" and len(path) > 1]
    if not edits:
        return
    defaults = config_dict(OmegaConf.load(root / "config.yaml"), root / "config.yaml",
                           resolve=False).get("defaults", [])
    for option in _group_options(overrides, defaults).get("method", []):
        path = root / "method" / f"{option}.yaml"
        method_cfg = config_dict(OmegaConf.load(path), path) if path.is_file() else {"name": option}
        _check_method_edits(method_cfg, edits)


def _check_method_edits(method_cfg: dict, edits: list[tuple[str, list[str], str]]) -> None:
    name = str(method_cfg.get("name"))
    known = _parameters_of(name)
    if not known:
        return                               # an unknown method is refused by its own check
    grid, preset = _grid_and_preset(method_cfg, edits)
    fixed_by_preset = dict((method_cfg.get("presets") or {}).get(preset) or {}) if preset else {}
    for prefix, path, value in edits:
        if prefix == "~":
            continue
        if len(path) == 2 and path[1] not in METHOD_CONFIG_KEYS:
            raise UFSBenchError(_not_a_config_key(dict(method_cfg, grid=dict.fromkeys(grid)),
                                                  path[1], value))
        section = path[1]
        if not ((section in PARAMETER_SECTIONS and len(path) == 3)
                or (section == "presets" and len(path) == 4)):
            continue
        parameter = path[-1]
        if parameter not in known:
            raise UFSBenchError(_no_such_parameter(name, ".".join(path), parameter, known))
        if section in PARAMETER_SECTIONS and parameter in fixed_by_preset:
            raise UFSBenchError(_overridden_by_preset(section, parameter, value, preset,
                                                      fixed_by_preset[parameter]))
        if section == "params" and parameter in grid:
            default = (f" and method.default.{parameter}={value} (the label-free rule's "
                       f"setting)" if parameter in (method_cfg.get("default") or {}) else "")
            raise UFSBenchError(
                f"method.params.{parameter} would be overridden by the grid axis "
                f"method.grid.{parameter} of {name}: to fix {parameter}, write "
                f"method.grid.{parameter}={value} (one value){default}")


def _grid_and_preset(method_cfg: dict, edits) -> tuple[set[str], str | None]:
    """The grid axes and the preset of a method config after the command line's overrides."""
    grid = set(method_cfg.get("grid") or {})
    preset = method_cfg.get("preset")
    for prefix, path, value in edits:
        if path == ["method", "preset"]:
            preset = None if prefix == "~" or value.lower() in ("", "null", "none") else value
        elif path[1] == "grid" and len(path) == 3:
            (grid.discard if prefix == "~" else grid.add)(path[2])
    return grid, preset


def _overridden_by_preset(section: str, parameter: str, value: str, preset, fixed) -> str:
    fix = (f"to run the preset with another {parameter}, write "
           f"method.presets.{preset}.{parameter}={value}" if section == "params" else
           f"to vary {parameter}, run without the preset")
    return (f"method.{section}.{parameter} would be overridden by method.preset={preset}, which "
            f"sets {parameter}={fixed}; {fix}")


def _no_such_parameter(name: str, key: str, parameter: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(parameter, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (f"unknown key {key!r}: {name} has no parameter {parameter!r}{hint}; its parameters "
            f"are {', '.join(sorted(known))}")
