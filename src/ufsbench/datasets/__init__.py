"""Data sets: the registry of the papers' data, the loader, and the embedded defaults."""

from ufsbench.datasets.base import Dataset
from ufsbench.datasets.files import default_feature_counts, is_data_path
from ufsbench.datasets.registry import (
                                        dataset_entry,
                                        dataset_feature_counts,
                                        dataset_names,
                                        dataset_status,
                                        load_dataset,
                                        load_dataset_config,
                                        load_file_dataset,
                                        path_dataset_config,
                                        read_mat,
                                        registry_entries,
                                        user_entry_file,
)
from ufsbench.datasets.synthetic import make_synthetic

__all__ = ["Dataset", "dataset_entry", "dataset_feature_counts", "dataset_names",
           "dataset_status", "default_feature_counts", "is_data_path", "load_dataset",
           "load_dataset_config", "load_file_dataset", "make_synthetic", "path_dataset_config",
           "read_mat", "registry_entries", "user_entry_file"]
