"""The user's registry directories: their data-set and method configs next to the packaged ones.

A user directory holds ``dataset/*.yaml`` and/or ``method/*.yaml``, like ``ufsbench/configs``.
They are read, lowest precedence first: the packaged configs, ``$XDG_CONFIG_HOME/ufsbench`` (by
default ``~/.config/ufsbench``), every directory of ``$UFSBENCH_CONFIG_DIR`` (separated by
``os.pathsep``), and those a ``ufsbench run`` names with Hydra's ``--config-dir`` or
``hydra.searchpath``. An entry shadows every earlier one of the same name. For Hydra the
directories are merged into one config tree (:func:`merged_config_dir`), so that what Hydra
composes is what the registry lists.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import yaml
from omegaconf import OmegaConf

from ufsbench.errors import UFSBenchError
from ufsbench.paths import config_dir

#: Directories named on a ``ufsbench run`` command line (``--config-dir``, ``hydra.searchpath``).
_extra_dirs: list[Path] = []
GROUPS = ("dataset", "method")


def set_command_line_dirs(dirs) -> None:
    """The config directories of the current command line (highest precedence)."""
    _extra_dirs[:] = [Path(d).expanduser().resolve() for d in dirs]


def user_config_dirs() -> list[Path]:
    """The user's config directories that exist, lowest precedence first."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    dirs = [Path(base) / "ufsbench"]
    dirs += [Path(d).expanduser() for d in os.environ.get("UFSBENCH_CONFIG_DIR", "").split(
        os.pathsep) if d]
    dirs += _extra_dirs
    seen, out = set(), []
    for d in dirs:
        d = d.resolve() if d.exists() else d
        if d not in seen and d.is_dir():
            seen.add(d)
            out.append(d)
    return out


def config_sources() -> tuple[tuple[Path, bool], ...]:
    """(directory, is the user's) of every config directory, lowest precedence first."""
    return ((config_dir(), False), *((d, True) for d in user_config_dirs()))


def _read(path: Path) -> dict:
    try:
        entry = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise UFSBenchError(f"cannot read config {path} ({str(exc).splitlines()[0]}); fix the "
                            f"YAML or remove the file") from None
    if not isinstance(entry, dict):
        raise UFSBenchError(f"config {path} is not a mapping of keys; see the packaged "
                            f"configs (ufsbench/configs/{path.parent.name}/) for the layout")
    return entry


def group_files(group: str, sources=None) -> dict[str, tuple[Path, bool]]:
    """Option name -> (config file, is the user's) of a config group, shadowing applied.

    The option name is the entry's ``name`` for data sets (which the registry keys on) and the
    file stem for methods (what ``method=`` chooses; its ``name`` picks the selector).
    """
    files = {}
    for directory, is_user in (sources or config_sources()):
        for path in sorted((Path(directory) / group).glob("*.yaml")):
            key = path.stem
            if group == "dataset" and is_user:
                entry = _read(path)
                if not entry.get("name"):
                    raise UFSBenchError(f"data-set config {path} has no name: key; add "
                                        f"`name: {path.stem}`")
                key = str(entry["name"])
            files[key] = (path, is_user)
    return files


def option_file(group: str, stem: str, sources=None) -> Path | None:
    """The config file of option ``stem`` in a group keyed by file stem (methods), shadowing
    applied: :func:`group_files`'s entry without listing the directories (a few stat calls; a
    glob of every directory took ~0.6 ms, a tenth of a small fit, on every ``make_selector``)."""
    if not stem or Path(stem).name != stem:
        return None
    for directory, _ in reversed(sources or config_sources()):
        path = Path(directory) / group / f"{stem}.yaml"
        if path.is_file():
            return path
    return None


def merged_config_dir(target: Path, extra_datasets: dict[str, dict] | None = None) -> Path:
    """Write the packaged config tree with the user's entries laid over it into ``target``
    (plus ``extra_datasets``: synthesised entries by name); returns ``target``."""
    shutil.copytree(config_dir(), target, dirs_exist_ok=True)
    for group in GROUPS:
        for name, (path, is_user) in group_files(group).items():
            if is_user:
                (target / group).mkdir(exist_ok=True)
                shutil.copyfile(path, target / group / f"{name}.yaml")
    for name, entry in (extra_datasets or {}).items():
        # OmegaConf's writer quotes what its own reader would take for a number (1e5, 2024).
        (target / "dataset" / f"{name}.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(entry)))
    return target
