"""Contributed layers: sparse embedding, the sparse-input dense layer, concurrent containers,
pixel-shuffle upsampling, synchronised batch normalisation."""
from .basic_layers import Identity, SparseDense, SparseEmbedding
from .concurrent import Concurrent, HybridConcurrent
from .pixel_shuffle import PixelShuffle1D, PixelShuffle2D, PixelShuffle3D
from .sync_batch_norm import SyncBatchNorm

__all__ = ["SparseEmbedding", "SparseDense", "Identity", "Concurrent", "HybridConcurrent",
           "PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D", "SyncBatchNorm"]
