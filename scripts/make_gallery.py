"""Redraw docs/gallery/: one PNG per figure kind and two screenshots of the HTML summary page.

A small store is built in a temporary directory (seconds on one core): two synthetic sets and the
first 300 scikit-learn digits, each with All Features, Laplacian Score (weight: heat, binary),
SCFS (5 iterations; alpha x beta = {0.01, 1} x {1, 100}) and maximum variance at 5, 10 and 20
features, 3 K-means runs per evaluation; plus Laplacian Score with k-means++ starts on one
synthetic set, a second protocol that tables, figures and the page leave out and name. Every
figure comes from ``ufsbench plot``, the page from ``ufsbench report --html``, the screenshots
from headless Chromium (``apt-get install chromium``); PNGs are reduced to 128 colours.

    python scripts/make_gallery.py [--out docs/gallery]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIGURES = {  # gallery name: file stem written by `ufsbench plot`
    "counts_acc": "counts_acc", "sensitivity_two_parameters": "sensitivity_digits_scfs_acc",
    "sensitivity_one_parameter": "sensitivity_digits_ls_acc", "convergence": "convergence_digits",
    "pixels": "pixels_digits", "ranks_acc": "ranks_acc", "admm": "admm_digits_h20",
}
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]


def build_store(root: Path) -> None:
    from ufsbench.datasets import Dataset, load_dataset, make_synthetic
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    methods = [
        {"name": "allfeatures", "params": {}, "grid": {}, "default": {}},
        {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
         "default": {"weight": "heat"}},
        {"name": "scfs", "params": {"max_iter": 5}, "grid": {"alpha": [0.01, 1.0],
                                                              "beta": [1.0, 100.0]},
         "default": {"alpha": 1.0, "beta": 1.0}},
        {"name": "variance", "params": {}, "grid": {}, "default": {}},
    ]
    first = make_synthetic(n_samples=90, n_features=30, random_state=0)
    second = make_synthetic(n_samples=90, n_features=30, random_state=1)
    second.name = "synthetic_b"
    digits = load_dataset("digits")
    digits = Dataset("digits", digits.X[:300], digits.y[:300], checksum="gallery:first300")
    protocol = EvaluationProtocol(n_runs=3)
    for data in (first, second, digits):
        for cfg in methods:
            run_sweep(data, plan_tasks(data, cfg, [5, 10, 20], protocol, 0, root), n_jobs=1)
    plus = EvaluationProtocol(n_runs=3, kmeans_init="k-means++")
    run_sweep(first, plan_tasks(first, methods[1], [5, 10], plus, 0, root), n_jobs=1)


def reduce_png(source: Path, target: Path, box=None) -> None:
    from PIL import Image

    image = Image.open(source).convert("RGB")
    if box:
        image = image.crop(box)
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/gallery")
    opts = parser.parse_args(argv)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "ufsbench.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_store(tmp / "store")
        common = ["--results-dir", str(tmp / "store"), "--out", str(tmp / "figs")]
        for kind in ("counts", "sensitivity", "convergence", "pixels", "ranks", "admm"):
            subprocess.run(cli + ["plot", kind, *common], check=True, capture_output=True)
        for name, stem in FIGURES.items():
            reduce_png(tmp / "figs" / f"{stem}.png", out / f"{name}.png")
        page = tmp / "summary.html"
        subprocess.run(cli + ["report", "--results-dir", str(tmp / "store"), "--html", str(page)],
                       check=True, capture_output=True)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium is None:
            print("chromium not found: the page screenshots are not redrawn", file=sys.stderr)
            return 0
        shot = tmp / "page.png"
        subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'chromium'}",
                        f"--screenshot={shot}", "--window-size=1280,4400", page.as_uri()],
                       check=True, capture_output=True)
        reduce_png(shot, out / "html_page_1.png", (0, 0, 1280, 2000))
        reduce_png(shot, out / "html_page_2.png", (0, 2000, 1280, 4400))
    for path in sorted(out.glob("*.png")):
        print(f"{path} ({path.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
