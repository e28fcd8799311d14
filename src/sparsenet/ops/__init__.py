"""Operators: the registry and one module per family.

Importing this package registers every operator and its storage-type rules.
Users reach the operators through ``mx.nd`` (eager) and ``mx.sym`` (symbolic).
"""
from . import registry
from . import cast, unary, scalar, binary, arithmetic, shape, reduce, dot, indexing, nn, loss
from . import optimizer_ops, optimizer_ops_adaptive

__all__ = ["registry", "cast", "unary", "scalar", "binary", "arithmetic", "shape", "reduce", "dot",
           "indexing", "nn", "loss", "optimizer_ops", "optimizer_ops_adaptive"]
