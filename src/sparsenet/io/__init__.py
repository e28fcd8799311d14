"""Data iterators and LibSVM reading/writing (``mx.io``)."""
