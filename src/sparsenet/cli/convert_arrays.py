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
from ..base import (FileFormatError, InvalidArgumentError, InvalidArgumentTypeError,
                    SparsenetError)
from ..ndarray import mxnet_format, serialization
from ..ndarray.creation import from_torch
from ..ndarray.ndarray import NDArray

__all__ = ["ARRAY_SUFFIXES", "DTYPES", "is_array_file", "read_arrays", "write_arrays",
           "convert"]

#: suffix -> format of the model (array) files convert handles
ARRAY_SUFFIXES = {".params": "mxnet", ".nd": "mxnet", ".pt": "torch", ".pth": "torch"}

#: the dtypes a model file may hold: those MXNet 1.x's NDArray format has a type flag for
DTYPES = mxnet_format.DTYPES


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
    arrays = [_checked_tensor(t, f"{os.fspath(path)}: tensor {name!r}")
              for name, t in obj.items()]
    return list(obj), arrays


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _check_dtype(dtype, where, error):
    if dtype not in DTYPES:
        raise error(f"{where}: dtype {_dtype_name(dtype)} is not one an MXNet array file "
                    f"holds: expected one of {', '.join(_dtype_name(d) for d in DTYPES)}")


def _check_coo(t, where):
    """The parts of a sparse COO tensor, checked before any torch routine (``coalesce``,
    ``to_sparse_csr``) reads its indices: torch's loader does not check them."""
    sparse_dim = t.sparse_dim()
    if not (sparse_dim == 1 or (sparse_dim == 2 and t.dim() == 2)):
        raise FileFormatError(f"{where}: a sparse COO tensor of {t.dim()} dimensions with "
                              f"sparse_dim={sparse_dim}; expected sparse_dim 1 (row_sparse) or "
                              f"a 2-D matrix (csr)")
    indices, values = t._indices(), t._values()
    shape = tuple(t.shape)
    if (indices.dim() != 2 or indices.shape[0] != sparse_dim or indices.dtype != torch.int64
            or values.dim() < 1 or values.shape[0] != indices.shape[1]
            or tuple(values.shape[1:]) != shape[sparse_dim:]):
        raise FileFormatError(f"{where}: COO indices of shape {tuple(indices.shape)} "
                              f"({_dtype_name(indices.dtype)}) and values of shape "
                              f"{tuple(values.shape)} do not make a tensor of shape {shape}")
    for d in range(sparse_dim):
        row = indices[d]
        bad = (row < 0) | (row >= shape[d])
        if bool(bad.any()):
            p = int(bad.nonzero()[0, 0])
            raise FileFormatError(f"{where}: COO index {int(row[p])} (dimension {d}, entry "
                                  f"{p}) is out of range [0, {shape[d]})")


def _checked_tensor(t, where):
    """An NDArray of the foreign tensor ``t``, every part checked (dtype, layout, the sparse
    invariants of the CSR/row_sparse constructors) before any kernel reads it."""
    _check_dtype(t.dtype, where, FileFormatError)
    if t.layout == torch.sparse_coo:
        _check_coo(t, where)
    elif t.layout not in (torch.strided, torch.sparse_csr):
        raise FileFormatError(f"{where}: layout {t.layout} is not one sparsenet holds: "
                              f"expected dense (strided), sparse CSR or sparse COO")
    try:
        with warnings.catch_warnings():  # torch's note that sparse CSR is in beta
            warnings.simplefilter("ignore", UserWarning)
            array = from_torch(t)
        if array.stype != "default":
            array.check_format(full_check=True)
    except SparsenetError as e:
        raise FileFormatError(f"{where}: {e}") from None
    return array


def _check_written(names, arrays):
    """Refuse, before anything is written, an array the reader of the output would refuse."""
    for i, a in enumerate(arrays):
        where = f"write: array {names[i]!r}" if names is not None else f"write: array {i}"
        if not isinstance(a, NDArray):
            raise InvalidArgumentTypeError(f"{where}: expected an NDArray, got "
                                           f"{type(a).__name__}")
        parts = [a._t] if a.stype == "default" else list(a._parts())
        _check_dtype(parts[0].dtype, where, InvalidArgumentTypeError)
        if a.stype != "default":
            a.check_format(full_check=True)


def write_arrays(path, names, arrays):
    """Write ``arrays`` (named unless ``names`` is None) to ``path``, atomically.

    Every array is checked first (a dtype the MXNet format holds, valid sparse parts), so
    the file written is one :func:`read_arrays` reads back.
    """
    _check_written(names, arrays)
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
