"""What every figure shares: the look, the captions, and writing figures to files.

The colour-blind-safe palette, markers and dash patterns that give each series the same style in
every figure (:func:`series_styles`), the grid of panels a figure is laid out on
(:func:`panel_grid`), its wrapped title and caption (:func:`set_suptitle`, :func:`set_caption`,
read back by :func:`caption_text`) with the sentences naming the evaluation protocol and the
selection rule of its cells, the formatting and ordering of parameter values on axes, and the
output side: :func:`save_figure` (PNG and PDF), :func:`save_svg` (byte-stable SVG),
:func:`figure_png_base64` (for HTML pages) and :func:`safe_stem` (file names). The figure
builders themselves are in :mod:`ufsbench.plots`.

It is the one module that imports matplotlib (the ``plots`` extra): without it, importing this
module, :mod:`ufsbench.plots` or :mod:`ufsbench.html` raises :class:`PlotsExtraMissing`, an
``ImportError`` whose one line names the extra to install, and the rest of the package works.
"""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ufsbench.errors import UFSBenchError
from ufsbench.records import PROTOCOL_COLUMNS
from ufsbench.report import RULE_LABELS, RULES, canonical_rule


class PlotsExtraMissing(UFSBenchError, ImportError):
    """matplotlib is not installed: the one line a figure command ends with names the extra."""


try:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator  # noqa: F401 (for ufsbench.plots)
except ImportError as exc:  # `pip install ufsbench` alone: selectors and harness, no figures
    raise PlotsExtraMissing("figures need matplotlib, which is not installed: "
                            "pip install 'ufsbench[plots]'") from exc

DEFAULT_OUT = Path("results") / "figures"
PANEL_SIZE = (3.6, 2.9)  # inches per panel
MAX_COLUMNS = 4


def panel_grid(n_panels: int, ncols: int = MAX_COLUMNS, size=PANEL_SIZE):
    """A figure with n_panels axes on a grid of at most ncols columns (spare cells removed)."""
    ncols = max(1, min(ncols, n_panels))
    nrows = math.ceil(n_panels / ncols)
    fig = Figure(figsize=(size[0] * ncols, size[1] * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n_panels:]:
        fig.delaxes(ax)
    return fig, list(axes[:n_panels])


MARKERS = "osD^vP*Xh<>p"
#: Okabe & Ito's colour-blind-safe palette (Okabe & Ito 2008, "Color Universal Design"), black
#: first; its yellow (#F0E442) is left out: too pale for lines on white.
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7")
LINESTYLES = ("-", "--", "-.", ":")


def series_styles(labels) -> dict:
    """A fixed (colour, marker, linestyle) per series label in sorted order, so figures agree
    with each other: Okabe-Ito colours; beyond seven series the marker and the dash pattern
    change as well, so that no two series look alike and none is told apart by hue alone."""
    n = len(OKABE_ITO)
    return {label: (OKABE_ITO[i % n], MARKERS[i % len(MARKERS)], LINESTYLES[(i // n) % 4])
            for i, label in enumerate(sorted(labels))}


def protocol_caption(df: pd.DataFrame) -> str:
    """The evaluation protocol of a results frame in words, for a figure's caption."""
    if df.empty or not set(PROTOCOL_COLUMNS) <= set(df.columns):
        return ""
    row = df.iloc[0]
    norm = row["nmi_normalisation"]
    nmi = ("NMI normalised by the arithmetic mean of H(y), H(z)" if norm == "arithmetic"
           else f"NMI normalised by {norm}(H(y), H(z))")
    return (f"Protocol: K-means on the selected features, {row['n_runs']} runs seeded "
            f"{row['seed']}..{int(row['seed']) + int(row['n_runs']) - 1}, {row['kmeans_init']} "
            f"starts, at most {row['kmeans_max_iter']} iterations; ACC with the Hungarian map; "
            f"{nmi}.")


def set_caption(fig: Figure, *sentences: str) -> None:
    """A caption under the figure (the figure's supxlabel, gid ``caption``), wrapped to its
    width; :func:`caption_text` reads it back."""
    import textwrap

    text = " ".join(s for s in sentences if s)
    width = max(40, int(fig.get_figwidth() * 15))  # ~15 characters per inch at 8 pt
    label = fig.supxlabel(textwrap.fill(text, width), fontsize=8, color="0.25")
    label.set_gid("caption")


def set_suptitle(fig: Figure, text: str) -> None:
    """The figure's title, each line wrapped to the figure's width (~11 characters per inch)."""
    import textwrap

    width = max(30, int(fig.get_figwidth() * 11))
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in text.split("\n")),
                 fontsize="medium")


def caption_text(fig: Figure) -> str:
    """A figure's caption as one line ("" when it has none)."""
    return " ".join(" ".join(t.get_text().split()) for t in fig.texts if t.get_gid() == "caption")


def rule_caption(rule: str) -> str:
    """The selection rule of a figure's cells, for its caption."""
    rule = canonical_rule(rule)
    return f"Cells: {RULE_LABELS[rule]}, {RULES[rule]}."


def format_value(value) -> str:
    """Parameter values as tick labels: 1e-06, 0.1, 100, heat."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return str(value)
    return f"{value:g}"


def sorted_values(values) -> list:
    """Distinct parameter values, numerically sorted when they are numbers."""
    distinct = list(dict.fromkeys(v for v in values if not is_missing(v)))
    try:
        return sorted(distinct, key=float)
    except (TypeError, ValueError):
        return sorted(distinct, key=str)


def is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def save_figure(fig: Figure, out_dir, stem: str, dpi: int = 150) -> list[Path]:
    """Write fig as ``<stem>.png`` and ``<stem>.pdf`` into out_dir; returns both paths."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / f"{stem}.png", out / f"{stem}.pdf"]
        for path in paths:
            fig.savefig(path, dpi=dpi)
    except OSError as exc:
        raise UFSBenchError(f"cannot write figures to {out} ({exc.strerror or exc}); choose a "
                            f"writable --out directory") from None
    return paths


def save_svg(fig: Figure, path) -> Path:
    """Write fig as SVG with a fixed hash salt and no date, so that the same figure gives the
    same bytes (a committed figure changes only when its content does)."""
    from matplotlib import rc_context

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with rc_context({"svg.hashsalt": "ufsbench"}):
        fig.savefig(path, metadata={"Date": None})
    return path


def figure_png_base64(fig: Figure, dpi: int = 110) -> str:
    """The figure as base64 PNG text, for embedding in a static HTML page."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def safe_stem(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))
