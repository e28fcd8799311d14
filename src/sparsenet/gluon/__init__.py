"""Gluon: the imperative training API (``mx.gluon``)."""
from . import data
