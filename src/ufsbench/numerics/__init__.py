"""Numerics shared by every selector: graphs, Laplacians, row sparsity, projections, eigen-helpers.

Methods import from here; nothing numeric is written twice under ``ufsbench/methods``.
"""

from ufsbench.numerics.graphs import (
                                      connected_components_count,
                                      knn_graph,
                                      knn_indices,
                                      knn_mask,
                                      laplacian,
                                      squared_distances,
)
from ufsbench.numerics.linalg import (
                                      eigh_largest,
                                      eigh_smallest,
                                      orthonormal_polar,
                                      project_simplex_rows,
                                      smallest_eigvecs_diag_plus_lowrank,
                                      sym,
)
from ufsbench.numerics.sparsity import (
                                      l20_project,
                                      l21_norm,
                                      l21_reweight,
                                      ranking_from_scores,
                                      row_norms,
                                      top_rows,
)

__all__ = [
    "connected_components_count", "knn_graph", "knn_indices", "knn_mask", "laplacian",
    "squared_distances", "eigh_largest", "eigh_smallest", "orthonormal_polar",
    "project_simplex_rows", "smallest_eigvecs_diag_plus_lowrank", "sym", "l20_project",
    "l21_norm", "l21_reweight", "ranking_from_scores", "row_norms", "top_rows",
]
