"""Contributed convolution layers (``mx.gluon.contrib.cnn``): deformable convolution v1 and v2."""
from .conv_layers import DeformableConvolution, ModulatedDeformableConvolution

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]
