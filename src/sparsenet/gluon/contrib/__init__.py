"""Contributed Gluon components (``mx.gluon.contrib``)."""
from . import cnn, nn, rnn

__all__ = ["cnn", "nn", "rnn"]
