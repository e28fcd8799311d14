"""Neural-network layers (``mx.gluon.nn``)."""
from ..block import Block, HybridBlock
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, Swish
from .basic_layers import (Dense, Dropout, Embedding, Flatten, HybridLambda, HybridSequential,
                           Lambda, Sequential)

__all__ = ["Block", "HybridBlock", "Activation", "LeakyReLU", "ELU", "SELU", "GELU", "Swish",
           "Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "Flatten",
           "Lambda", "HybridLambda"]
