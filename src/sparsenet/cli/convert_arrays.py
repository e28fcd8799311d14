"""``sparsenet convert`` for model files: MXNet NDArray files <-> plain PyTorch ``.pt``.

==========================  ============================================================
suffix                      format
==========================  ============================================================
``.params``, ``.nd``        MXNet 1.x's NDArray file (what ``mx.nd.save``,
                            ``save_parameters``, ``save_checkpoint`` and ``export`` write,
                            in MXNet and in sparsenet); read with :func:`sparsenet.nd.load`
                            (sparsenet's older archive format too), written in MXNet's
                            format, which MXNet 1.x opens
``.pt``, ``.pth``           a ``dict`` of named torch tensors, saved with ``torch.save``:
                            dense tensors, CSR arrays as ``torch.sparse_csr`` tensors,
                            row_sparse arrays as sparse COO tensors with one sparse
                            dimension (an ``nn.Embedding(sparse=True)`` gradient's layout);
                            read back with ``torch.load(weights_only=True)`` only
==========================  ============================================================

Names are kept (a Module checkpoint's ``arg:``/``aux:`` prefixes included); an MXNet file
holding a list of arrays gets the names ``"0"``, ``"1"``... in ``.pt`` and goes back as a
list. Nothing in either file runs: the MXNet reader parses the binary format, and
``torch.load`` runs with ``weights_only=True``.

>>> import os, tempfile, torch, sparsenet as mx
>>> d = tempfile.mkdtemp()
>>> mx.nd.save(os.path.join(d, "m.params"), {"w": mx.nd.ones((2, 2)),
...                                          "e": mx.nd.ones((3, 2)).tostype("row_sparse")})
>>> summary = convert(os.path.join(d, "m.params"), os.path.join(d, "m.pt"))
>>> t = torch.load(os.path.join(d, "m.pt"), weights_only=True)
>>> sorted(t), t["e"].layout, t["w"].sum().item()
(['e', 'w'], torch.sparse_coo, 4.0)
"""
import os
import warnings

import torch

from ..atomic import atomic_write
from ..base import FileFormatError, InvalidArgumentError
from ..ndarray import serialization
from ..ndarray.creation import from_torch

__all__ = ["ARRAY_SUFFIXES", "is_array_file", "read_arrays", "write_arrays", "convert"]

#: suffix -> format of the model (array) files convert handles
ARRAY_SUFFIXES = {".params": "mxnet", ".nd": "mxnet", ".pt": "torch", ".pth": "torch"}


def is_array_file(path):
    """Whether ``path``'s suffix names a model (array) file rather than a data file.

    >>> is_array_file("model-0007.params"), is_array_file("train.svm")
    (True, False)
    """
    return os.path.splitext(os.fspath(path).lower())[1] in ARRAY_SUFFIXES


def _kind(path):
    return ARRAY_SUFFIXES[os.path.splitext(os.fspath(path).lower())[1]]


def read_arrays(path):
    """``(names or None, [NDArray])`` of a model file (None: an MXNet list file)."""
    if _kind(path) == "mxnet":
        loaded = serialization.load(os.fspath(path))
        if isinstance(loaded, dict):
            return list(loaded), list(loaded.values())
        return None, list(loaded)
    try:
        with warnings.catch_warnings():  # torch's notes on sparse tensors: not the user's
            warnings.simplefilter("ignore", UserWarning)
            obj = torch.load(os.fspath(path), weights_only=True, map_location="cpu")
    except FileNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001 (weights_only: nothing ran; any failure is the file's)
        raise FileFormatError(f"{os.fspath(path)}: not a PyTorch file of named tensors "
                              f"({type(e).__name__})") from None
    if not isinstance(obj, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                            for k, v in obj.items()):
        raise FileFormatError(f"{os.fspath(path)}: expected a dict of named tensors (as "
                              f"torch.save(model.state_dict()) writes), got "
                              f"{type(obj).__name__}")
    arrays = []
    for name, t in obj.items():
        try:
            arrays.append(from_torch(t))
        except Exception as e:  # noqa: BLE001 (a layout or dtype sparsenet does not hold)
            raise FileFormatError(f"{os.fspath(path)}: tensor {name!r}: {e}") from None
    return list(obj), arrays


def write_arrays(path, names, arrays):
    """Write ``arrays`` (named unless ``names`` is None) to ``path``, atomically."""
    if _kind(path) == "mxnet":
        serialization.save(os.fspath(path), dict(zip(names, arrays)) if names is not None
                           else arrays)
        return
    if names is None:
        names = [str(i) for i in range(len(arrays))]
    tensors = {n: a.to_torch() if a.stype == "default" else a.to_torch().detach().clone()
               for n, a in zip(names, arrays)}
    atomic_write(os.fspath(path), lambda f: torch.save(tensors, f))


def convert(src, dst):
    """Convert the model file ``src`` to ``dst`` (formats from the suffixes); a summary line.

    Raises
    ------
    InvalidArgumentError
        When ``dst`` is not a model file (a data file such as ``.svm`` or ``.npz``).
    FileFormatError
        When ``src`` is not a readable model file.
    """
    if not is_array_file(dst):
        raise InvalidArgumentError(
            f"{os.fspath(dst)}: a model file ({os.fspath(src)}) converts to another model "
            f"file: expected a name ending in {', '.join(ARRAY_SUFFIXES)}")
    names, arrays = read_arrays(src)
    write_arrays(dst, names, arrays)
    stypes = sorted({a.stype for a in arrays})
    return (f"{os.fspath(src)} ({_kind(src)}) -> {os.fspath(dst)} ({_kind(dst)}): "
            f"{len(arrays)} arrays ({', '.join(stypes) or 'none'})")
