"""The Dataset object every loader returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Dataset:
    """A labelled data set: X (n_samples, n_features) float64, y (n_samples,) int labels 0..c-1.

    ``informative`` lists the planted informative feature indices of synthetic data (None for
    real data); ``checksum`` identifies the exact data the results were computed on;
    ``feature_names`` are a table's column names (None when the data has none).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    checksum: str = ""
    informative: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    #: Column names of a tabular file (None when the data has none).
    feature_names: list[str] | None = None

    @property
    def n_classes(self) -> int:
        return int(np.unique(self.y).size)

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def __repr__(self) -> str:
        return (f"Dataset({self.name!r}, n_samples={self.n_samples}, n_features={self.n_features}, "
                f"n_classes={self.n_classes})")
