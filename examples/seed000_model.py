"""Seed 000's networks, for the scripts in ``benchmarks/`` (``bench_seed000.py``, ``bench_dist.py``).

One copy lives in the package, :mod:`sparsenet.cli._seed000` (``sparsenet demo`` runs
them); this module re-exports it under the name the benchmarks import.
"""
from sparsenet.cli._seed000 import (VARIANTS, FullyConnected, FullyConnectedSparse,
                                    TorchModel, build_net, save_as_libsvm, torch_batches,
                                    torch_epoch)

__all__ = ["VARIANTS", "FullyConnected", "FullyConnectedSparse", "TorchModel", "build_net",
           "save_as_libsvm", "torch_batches", "torch_epoch"]
