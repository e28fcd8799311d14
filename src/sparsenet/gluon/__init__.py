"""Gluon: the imperative training API (``mx.gluon``)."""
from . import data  # noqa: F401 - the mx.gluon.data namespace
