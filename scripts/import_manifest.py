"""Regenerate configs/dataset/*.yaml (the data-set registry) from shared/datasets/MANIFEST.csv.

Usage: python scripts/import_manifest.py [path/to/MANIFEST.csv]

The registry records, per data set, what the project knows without the data: file name, sha256,
shape, class count, the papers that use it, the feature counts of those papers, and the public
source (repository, path, commit, and how to read the original file when it had to be
converted). Hand edits to the generated files are overwritten: change this script instead.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MANIFEST = ROOT.parent / "shared" / "datasets" / "MANIFEST.csv"
OUT = ROOT / "src" / "ufsbench" / "configs" / "dataset"

DEFAULT_COUNTS = [50, 100, 150, 200, 250, 300]
FEATURE_COUNTS = {"usps": [50, 80, 110, 140, 170, 200],  # UFSOL Sec. 5.2
                  "binalpha": list(range(10, 101, 10))}  # SOGFS Table 1

# How to read each original (pre-conversion) source file, for downloads of converted sets.
SOURCE_LAYOUT = {
    "usps": {"x": "usps_all", "x_columns": [0, 256], "y": "usps_all", "y_column": 256},
    "att": {"x": "fea", "y": "gnd"},
    "jaffe": {"x": "fea", "y": "gnd"},
    "binalpha": {"x": "fea", "y": "gnd"},
    "umist": {"x": "X", "y": "Y", "transpose_x": True, "y_onehot": True},
    "srbct": {"x": "data", "y": "label"},
}
IMAGE_SHAPE = {"coil20": [32, 32, "F"], "orl": [32, 32, "F"], "jaffe": [26, 26, "F"],
               "umist": [28, 23, "F"], "att": [23, 28, "C"], "usps": [16, 16, "C"],
               "binalpha": [20, 16, "F"], "pix10p": [100, 100, "F"], "pie10p": [55, 44, "F"]}
# Data sets that are not in shared/datasets: shape, classes and the papers' subset rules.
MISSING = {
    "lung": dict(n_samples=203, n_features=3312, n_classes=5),
    "micromass": dict(n_samples=360, n_features=1300, n_classes=10,
                      source_note="OpenML micro-mass (ID 1514), 360 x 1300, 10 classes"),
    "hars": dict(n_samples=3000, n_features=561, n_classes=6, first_per_class=500,
                 source_note="UCI HAR (10299 x 561, 6 classes); the paper uses the first 500 "
                             "samples of each class"),
    "fashion": dict(n_samples=3000, n_features=784, n_classes=10, first_per_class=300,
                    source_note="Fashion-MNIST training set; the paper uses the first 300 samples "
                                "of each class"),
    "gina": dict(n_samples=3468, n_features=784, n_classes=10,
                 source_note="OpenML gina_prior2 (ID 1041), 3468 x 784, 10 classes"),
    "fabert": dict(n_samples=3500, n_features=800, n_classes=7, first_per_class=500,
                   source_note="AutoML challenge fabert training set (8237 x 800); the paper uses "
                               "the first 500 samples of each class"),
    "dilbert": dict(n_samples=3500, n_features=2000, n_classes=5, first_per_class=700,
                    source_note="AutoML challenge dilbert training set (10000 x 2000); the paper "
                                "uses the first 700 samples of each class"),
}


def entry(row: dict) -> dict:
    name = row["name"]
    papers = [p.split("(")[0] for p in row["papers"].split(";") if p] if row["papers"] else ["KMUFS"]
    e = {"name": name, "kind": "mat", "file": row["file"] or f"{name}.mat",
         "sha256": row["sha256"] or None, "present_in_shared": bool(row["file"]),
         "papers": papers, "feature_counts": FEATURE_COUNTS.get(name, DEFAULT_COUNTS)}
    if row["n_samples"]:
        e.update(n_samples=int(row["n_samples"]), n_features=int(row["n_features"]),
                 n_classes=int(row["n_classes"]))
    extra = MISSING.get(name, {})
    for key in ("n_samples", "n_features", "n_classes"):
        if key in extra:
            e[key] = extra[key]
    if "first_per_class" in extra:
        e["subset"] = {"first_per_class": extra["first_per_class"]}
    source = {}
    if row["source_repo"]:
        source = {"repo": row["source_repo"], "path": row["source_path"],
                  "commit": row["source_commit"],
                  "url": f"https://github.com/{row['source_repo']}/raw/{row['source_commit']}/"
                         f"{row['source_path']}"}
        if row["converted"] == "yes":
            source["sha256"] = row["original_sha256"]
            source["layout"] = SOURCE_LAYOUT[name]
        elif row["converted"] == "no":
            source["sha256"] = row["sha256"]
    if name == "lung":
        source["git_blob_sha1"] = "becb82c675f788b040d5ced741955e19b94ce9b8"
    if "source_note" in extra:
        source["note"] = extra["source_note"]
    e["source"] = source
    if name in IMAGE_SHAPE:
        h, w, order = IMAGE_SHAPE[name]
        e["image"] = {"shape": [h, w], "order": order}
    return e


#: Source keys kept by hand in the registry files (OpenML pins and where they come from): a
#: regeneration carries them over from the file it replaces.
HAND_KEPT_SOURCE_KEYS = ("openml", "id_from")


def write(entry_: dict) -> None:
    path = OUT / f"{entry_['name']}.yaml"
    if path.is_file() and isinstance(entry_.get("source"), dict):
        old_source = (yaml.safe_load(path.read_text()) or {}).get("source") or {}
        entry_["source"] = {**{k: old_source[k] for k in HAND_KEPT_SOURCE_KEYS
                               if k in old_source}, **entry_["source"]}
    header = ("# Data-set registry entry, generated by scripts/import_manifest.py from "
              "MANIFEST.csv\n# (source.openml and source.id_from are kept by hand and carried "
              "over by the script).\n")
    path.write_text(
        header + yaml.safe_dump(entry_, sort_keys=False, width=100, default_flow_style=None))


def main(argv: list[str]) -> None:
    manifest = Path(argv[1]) if len(argv) > 1 else DEFAULT_MANIFEST
    OUT.mkdir(parents=True, exist_ok=True)
    with open(manifest, newline="") as fh:
        for row in csv.DictReader(fh):
            write(entry(row))
    # Subsets the papers define, computed deterministically from a stored file.
    write({"name": "usps_sogfs", "kind": "subset", "parent": "usps", "papers": ["SOGFS"],
           "subset": {"first_per_class": 100}, "n_samples": 1000, "n_features": 256,
           "n_classes": 10, "feature_counts": list(range(10, 101, 10)),
           "note": "SOGFS uses a 1000-sample USPS subset without stating how it was drawn; ours "
                   "is the first 100 samples of each digit (deterministic, label-balanced)."})
    # Embedded defaults: no data directory needed.
    write({"name": "digits", "kind": "sklearn_digits", "papers": [], "n_samples": 1797,
           "n_features": 64, "n_classes": 10, "feature_counts": [10, 20, 30, 40, 50],
           "image": {"shape": [8, 8], "order": "C"},
           "note": "scikit-learn's bundled copy of the UCI optical digits test set (8x8 images)."})
    write({"name": "synthetic", "kind": "synthetic", "papers": [], "n_samples": 300,
           "n_features": 100, "n_classes": 3, "feature_counts": [5, 10, 20, 40],
           "synthetic": {"n_samples": 300, "n_features": 100, "n_informative": 10,
                         "n_clusters": 3, "separation": 3.0, "noise_scale": 1.0,
                         "random_state": 0},
           "note": "Seeded Gaussian clusters on 10 planted informative features among noise."})


if __name__ == "__main__":
    main(sys.argv)
