"""Contributed layers: sparse embedding and the sparse-input dense layer."""
from .basic_layers import Identity, SparseDense, SparseEmbedding

__all__ = ["SparseEmbedding", "SparseDense", "Identity"]
