"""Hand-written input rules for operators that take sparse storage: CSR matrices and graphs, and
row_sparse weights and gradients."""

from __future__ import annotations

from opperf.frameworks.mxnet.rules.layers import Configurations, T
from opperf.operators.rules.profiles import LayerSizes
from opperf.results.measurement import Alias

GRAPH_DENSITY = 0.01
"""Fraction of possible edges present in a generated graph's adjacency matrix."""

GRADIENT_DENSITY = 0.1
"""Fraction of rows a sparse gradient touches, as after an embedding lookup."""


def _rows(s: LayerSizes) -> int:
    return s.features * s.batch


def _vertices(s: LayerSizes) -> int:
    return s.features * 4


def _graph(s: LayerSizes) -> T:
    """A CSR adjacency matrix whose stored values are integer edge ids, as DGL's operators expect."""
    n = _vertices(s)
    return T((n, n), dtype="int64", storage="csr", density=GRAPH_DENSITY)


def _vertex_ids(s: LayerSizes, count: int) -> T:
    return T((count,), dtype="int64", low=0, high=_vertices(s), structure="sorted_unique")


def _row_sparse(s: LayerSizes, density: float) -> T:
    return T((_rows(s), s.features), storage="row_sparse", density=density)


def _retain(s: LayerSizes) -> Configurations:
    rows = _rows(s)
    kept = T((rows // 2,), dtype="int64", low=0, high=rows, structure="sorted_unique")
    return [{"data": _row_sparse(s, density=0.5), "indices": kept}]


def _square_sum(s: LayerSizes) -> Configurations:
    return [{"data": _row_sparse(s, density=0.5), "axis": axis} for axis in (0, 1)]


def _adagrad(s: LayerSizes) -> Configurations:
    return [
        {
            "weight": _row_sparse(s, density=1.0),
            "grad": _row_sparse(s, density=GRADIENT_DENSITY),
            "history": _row_sparse(s, density=1.0),
            "lr": 0.1,
            "out": Alias("weight"),
        }
    ]


def _getnnz(s: LayerSizes) -> Configurations:
    matrix = T((_rows(s), s.features), storage="csr", density=0.1)
    return [{"data": matrix, "axis": axis} for axis in (None, 1)]  # MXNet 1.9.1 has no axis=0


def _edge_id(s: LayerSizes) -> Configurations:
    n = _vertices(s)
    endpoints = T((n,), low=0, high=n, integral=True)
    return [{"data": T((n, n), storage="csr", density=GRAPH_DENSITY), "u": endpoints, "v": endpoints}]


def _adjacency(s: LayerSizes) -> Configurations:
    return [{"data": _graph(s)}]


def _subgraph(s: LayerSizes) -> Configurations:
    return [{"graph": _graph(s), "data": (_vertex_ids(s, _vertices(s) // 2),), "return_mapping": True}]


def _neighbor_sample(uniform: bool):
    def rule(s: LayerSizes) -> Configurations:
        n = _vertices(s)
        probability = {} if uniform else {"probability": T((n,))}
        return [
            {
                "csr_matrix": _graph(s),
                **probability,
                "seed_arrays": (_vertex_ids(s, n // 8),),
                "num_hops": 2,
                "num_neighbor": 4,
                "max_num_vertices": n // 2,
            }
        ]

    return rule


SPARSE_RULES = {
    "_sparse_retain": _retain,
    "_square_sum": _square_sum,
    "_sparse_adagrad_update": _adagrad,
    "_contrib_getnnz": _getnnz,
    "_contrib_edge_id": _edge_id,
    "_contrib_dgl_adjacency": _adjacency,
    "_contrib_dgl_subgraph": _subgraph,
    "_contrib_dgl_csr_neighbor_uniform_sample": _neighbor_sample(uniform=True),
    "_contrib_dgl_csr_neighbor_non_uniform_sample": _neighbor_sample(uniform=False),
}
