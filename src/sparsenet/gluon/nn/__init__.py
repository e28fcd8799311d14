"""Neural-network layers (``mx.gluon.nn``)."""
from ..block import Block, HybridBlock
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, PReLU, Swish
from .basic_layers import (Dense, Dropout, Embedding, Flatten, HybridLambda, HybridSequential,
                           Lambda, Sequential)
from .norm_layers import BatchNorm, BatchNormReLU, GroupNorm, InstanceNorm, LayerNorm
from .conv_layers import (Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D,
                          Conv3DTranspose)
from .pool_layers import (AvgPool1D, AvgPool2D, AvgPool3D, GlobalAvgPool1D, GlobalAvgPool2D,
                          GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D,
                          MaxPool1D, MaxPool2D, MaxPool3D, ReflectionPad2D)

__all__ = ["Block", "HybridBlock", "Activation", "LeakyReLU", "ELU", "SELU", "GELU", "Swish",
           "Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "Flatten",
           "Lambda", "HybridLambda", "PReLU", "BatchNorm", "BatchNormReLU", "InstanceNorm",
           "LayerNorm", "GroupNorm", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose",
           "Conv2DTranspose", "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D",
           "AvgPool1D", "AvgPool2D", "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D",
           "GlobalMaxPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D",
           "ReflectionPad2D"]
