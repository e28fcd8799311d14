"""``mx.nd.save`` / ``mx.nd.load``: arrays of every storage type, written atomically.

The file is a ``torch.save`` archive of plain tensors and strings (loaded with
``weights_only=True``, so loading never runs code). Each array records its
storage type, shape, dtype, parts (dense values; CSR data/indices/indptr;
row_sparse data/indices) and a SHA-256 of the parts. Loading checks all of it
and names the file and the key on any problem.

>>> import os, tempfile, sparsenet as mx
>>> path = os.path.join(tempfile.mkdtemp(), 'arrays.nd')
>>> mx.nd.save(path, {'w': mx.nd.ones((2,)).tostype('row_sparse'), 'b': mx.nd.zeros((1,))})
>>> loaded = mx.nd.load(path)
>>> sorted((k, v.stype) for k, v in loaded.items())
[('b', 'default'), ('w', 'row_sparse')]
"""
import hashlib
import io
import os

import torch

from ..atomic import atomic_write
from ..base import FileFormatError, SparseFormatError, numpy_dtype
from .csr import CSRNDArray
from .ndarray import NDArray
from .row_sparse import RowSparseNDArray
from .stype import CSR, DEFAULT, ROW_SPARSE

__all__ = ["save", "load", "save_to_bytes", "load_from_bytes"]

FORMAT = "sparsenet.ndarray"
VERSION = 1


def _parts(arr):
    if arr.stype == DEFAULT:
        return [arr._t.detach()]
    return [p.detach() for p in arr._parts()]


def _digest(parts):
    h = hashlib.sha256()
    for p in parts:
        c = p.contiguous()
        h.update(str(c.dtype).encode())
        h.update(str(tuple(c.shape)).encode())
        if c.numel():
            h.update(c.reshape(-1).view(torch.uint8).numpy().tobytes() if c.dtype != torch.bool
                     else c.numpy().tobytes())
    return h.hexdigest()


def _encode_array(arr):
    if not isinstance(arr, NDArray):
        raise TypeError(f"save: expected NDArray values, got {type(arr).__name__}")
    parts = [p.cpu() for p in _parts(arr)]
    return {"stype": arr.stype, "shape": list(arr.shape), "dtype": numpy_dtype(parts[0].dtype).name,
            "parts": parts, "sha256": _digest(parts)}


def _decode_array(rec, where="<pickle>"):
    try:
        stype, shape, parts = rec["stype"], tuple(rec["shape"]), rec["parts"]
    except (KeyError, TypeError):
        raise FileFormatError(f"{where}: malformed array record") from None
    if "sha256" in rec and _digest(parts) != rec["sha256"]:
        raise FileFormatError(f"{where}: checksum mismatch, the file is corrupt")
    try:
        if stype == DEFAULT:
            (values,) = parts
            if tuple(values.shape) != shape:
                raise FileFormatError(f"{where}: stored shape {tuple(values.shape)} != "
                                      f"recorded {shape}")
            return NDArray(values)
        if stype == CSR:
            return CSRNDArray(*parts, shape)
        if stype == ROW_SPARSE:
            return RowSparseNDArray(*parts, shape)
    except (SparseFormatError, ValueError, TypeError) as e:
        if isinstance(e, FileFormatError):
            raise
        raise FileFormatError(f"{where}: {e}") from None
    raise FileFormatError(f"{where}: unknown storage type {stype!r}")


def _payload(data):
    if isinstance(data, NDArray):
        return {"format": FORMAT, "version": VERSION, "kind": "list",
                "arrays": [_encode_array(data)]}
    if isinstance(data, dict):
        keys = list(data)
        for k in keys:
            if not isinstance(k, str):
                raise TypeError(f"save: dict keys must be str, got {type(k).__name__}")
        return {"format": FORMAT, "version": VERSION, "kind": "dict", "keys": keys,
                "arrays": [_encode_array(data[k]) for k in keys]}
    if isinstance(data, (list, tuple)):
        return {"format": FORMAT, "version": VERSION, "kind": "list",
                "arrays": [_encode_array(a) for a in data]}
    raise TypeError(f"save: expected an NDArray, a list of NDArrays or a dict str -> NDArray, "
                    f"got {type(data).__name__}")


def save(fname, data):
    """Save an NDArray, a list of NDArrays or a dict ``str -> NDArray`` to ``fname``.

    Storage types are kept. The write is atomic: a crash leaves the previous
    file intact.

    Parameters
    ----------
    fname : str or os.PathLike
    data : NDArray, list of NDArray or dict of str to NDArray

    Examples
    --------
    >>> import os, tempfile, sparsenet as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'x.nd')
    >>> mx.nd.save(p, [mx.nd.ones((2,))])
    >>> mx.nd.load(p)[0].asnumpy()
    array([1., 1.], dtype=float32)
    """
    payload = _payload(data)
    atomic_write(fname, lambda f: torch.save(payload, f))


def save_to_bytes(data):
    """The bytes :func:`save` would write."""
    buf = io.BytesIO()
    torch.save(_payload(data), buf)
    return buf.getvalue()


def _unpack(payload, where, ctx):
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise FileFormatError(f"{where}: not a sparsenet array file")
    if payload.get("version", 0) > VERSION:
        raise FileFormatError(f"{where}: written by a newer sparsenet (format version "
                              f"{payload['version']} > {VERSION})")
    arrays = payload.get("arrays", [])
    if payload.get("kind") == "dict":
        keys = payload.get("keys", [])
        if len(keys) != len(arrays):
            raise FileFormatError(f"{where}: {len(keys)} keys for {len(arrays)} arrays")
        out = {k: _decode_array(a, f"{where}: key '{k}'") for k, a in zip(keys, arrays)}
    else:
        out = [_decode_array(a, f"{where}: item {i}") for i, a in enumerate(arrays)]
    if ctx is not None:
        if isinstance(out, dict):
            out = {k: v.as_in_context(ctx) for k, v in out.items()}
        else:
            out = [v.as_in_context(ctx) for v in out]
    return out


def load(fname, ctx=None):
    """Load what :func:`save` wrote: a list of NDArrays or a dict ``str -> NDArray``.

    Raises :class:`~sparsenet.base.FileFormatError` naming the file (and key)
    when the file is truncated, corrupt or holds invalid sparse parts, and
    ``FileNotFoundError`` when it does not exist.

    Parameters
    ----------
    fname : str or os.PathLike
    ctx : Context, optional
        Put the arrays there (CPU by default).
    """
    fname = os.fspath(fname)
    if not os.path.exists(fname):
        raise FileNotFoundError(f"no such file: '{fname}'")
    if os.path.getsize(fname) == 0:
        raise FileFormatError(f"{fname}: the file is empty")
    try:
        payload = torch.load(fname, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises RuntimeError/UnpicklingError/EOFError variants
        raise FileFormatError(f"{fname}: cannot read the file ({type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else 'truncated'})") from None
    return _unpack(payload, fname, ctx)


def load_from_bytes(buf, ctx=None):
    """Load arrays from bytes produced by :func:`save_to_bytes`."""
    try:
        payload = torch.load(io.BytesIO(buf), map_location="cpu", weights_only=True)
    except Exception as e:
        raise FileFormatError(f"<bytes>: cannot read ({type(e).__name__})") from None
    return _unpack(payload, "<bytes>", ctx)
