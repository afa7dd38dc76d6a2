"""A regular (non-editable) install must carry every subpackage, the Hydra configs and the
smoke run's reference times."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_found_by_setuptools():
    from setuptools import find_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["packages"]["find"]["where"] == ["src"]
    found = {".".join(p.parent.relative_to(ROOT / "src").parts)
             for p in (ROOT / "src" / "ufsbench").rglob("__init__.py")}
    assert found <= set(find_packages(ROOT / "src"))
    assert config["package-dir"] == {"": "src"}
    assert (ROOT / "src" / "ufsbench" / "configs" / "config.yaml").is_file()
    assert "configs/*/*.yaml" in config["package-data"]["ufsbench"]
    assert (ROOT / "src" / "ufsbench" / "smoke_reference.csv").is_file()
    assert "smoke_reference.csv" in config["package-data"]["ufsbench"]


def test_the_package_imports_from_the_clones_parent_folder(tmp_path):
    # A clone named like the package, entered from its parent folder: the folder must not
    # shadow the installed package as a namespace package (the src/ layout's purpose).
    import subprocess
    import sys

    (tmp_path / "ufsbench").symlink_to(ROOT, target_is_directory=True)
    snippet = "from ufsbench.datasets import load_dataset; print(load_dataset('synthetic').X.shape)"
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
