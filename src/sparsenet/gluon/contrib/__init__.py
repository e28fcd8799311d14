"""Contributed Gluon components (``mx.gluon.contrib``)."""
from . import nn

__all__ = ["nn"]
