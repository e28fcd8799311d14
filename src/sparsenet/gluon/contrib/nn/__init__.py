"""Contributed layers: sparse embedding, the sparse-input dense layer, concurrent containers."""
from .basic_layers import Identity, SparseDense, SparseEmbedding
from .concurrent import Concurrent, HybridConcurrent

__all__ = ["SparseEmbedding", "SparseDense", "Identity", "Concurrent", "HybridConcurrent"]
