"""Data sets: the registry of the papers' data, the loader, and the embedded defaults."""

from ufsbench.datasets.base import Dataset
from ufsbench.datasets.registry import (dataset_entry, dataset_names, dataset_status,
                                        load_dataset, read_mat, registry_entries)
from ufsbench.datasets.synthetic import make_synthetic

__all__ = ["Dataset", "dataset_entry", "dataset_names", "dataset_status", "load_dataset",
           "make_synthetic", "read_mat", "registry_entries"]
