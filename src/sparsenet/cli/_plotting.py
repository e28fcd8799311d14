"""Plots of the ``sparsenet`` commands: matplotlib (Agg backend), imported on first use.

>>> try:
...     plt = pyplot()
... except MissingPackageError as exc:
...     print(exc)
... else:
...     print(plt.get_backend().lower())
agg
"""
from ..base import SparsenetError

__all__ = ["MissingPackageError", "pyplot"]


class MissingPackageError(SparsenetError, ImportError):
    """An optional package a command's option needs is not installed."""


def pyplot(option="--plot"):
    """``matplotlib.pyplot`` on the non-interactive Agg backend (writes files, needs no display).

    Raises
    ------
    MissingPackageError
        matplotlib is not installed; the message names ``option`` and the install command.
    """
    try:  # on first use: matplotlib is optional and takes ~0.3 s to import
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot as plt  # after use(): the backend is chosen first
    except ImportError:
        raise MissingPackageError(f"{option} needs matplotlib: pip install matplotlib") from None
    return plt
