"""``mx.nd.save`` / ``mx.nd.load``: arrays of every storage type, written atomically.

``save`` writes MXNet 1.x's NDArray format by default (see :mod:`.mxnet_format`), so MXNet
1.9.1's ``mx.nd.load`` opens the file; ``format='sparsenet'`` writes sparsenet's earlier format,
a ``torch.save`` archive of plain tensors and strings with a SHA-256 of each array's parts.
``load`` reads both, told apart by the first bytes; neither ever runs code from the file
(the archive is opened with ``weights_only=True``). Any problem names the file and the array.

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
from ..base import (FileFormatError, InvalidArgumentError, InvalidArgumentTypeError,
                    SparseFormatError, numpy_dtype)
from . import mxnet_format
from .csr import CSRNDArray
from .ndarray import NDArray
from .row_sparse import RowSparseNDArray
from .stype import CSR, DEFAULT, ROW_SPARSE

__all__ = ["save", "load", "save_to_bytes", "load_from_bytes"]

FORMAT = "sparsenet.ndarray"
VERSION = 1
FORMATS = ("mxnet", "sparsenet")


def _named(data):
    """``(arrays, names)`` for MXNet's format: names are empty for a list."""
    if isinstance(data, NDArray):
        return [data], []
    if isinstance(data, dict):
        for k in data:
            if not isinstance(k, str):
                raise InvalidArgumentTypeError(f"save: dict keys must be str, got "
                                               f"{type(k).__name__} {k!r}")
        return list(data.values()), list(data)
    if isinstance(data, (list, tuple)):
        return list(data), []
    raise InvalidArgumentTypeError(f"save: expected an NDArray, a list of NDArrays or a dict "
                                   f"str -> NDArray, got {type(data).__name__}")


def _writer(data, format):
    if format == "mxnet":
        arrays, names = _named(data)
        for i, a in enumerate(arrays):
            if not isinstance(a, NDArray):
                where = repr(names[i]) if names else f"#{i}"
                raise InvalidArgumentTypeError(f"save: expected NDArray values, got "
                                               f"{type(a).__name__} for {where}")
        return lambda f: mxnet_format.write_arrays(f, arrays, names)
    if format == "sparsenet":
        payload = _payload(data)
        return lambda f: torch.save(payload, f)
    raise InvalidArgumentError(f"save: format must be one of {FORMATS}, got {format!r}")


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
        raise InvalidArgumentTypeError(f"save: expected NDArray values, got {type(arr).__name__}")
    parts = [p.cpu() for p in _parts(arr)]
    return {"stype": arr.stype, "shape": list(arr.shape), "dtype": numpy_dtype(parts[0].dtype).name,
            "parts": parts, "sha256": _digest(parts)}


_INDEX_DTYPES = (torch.int32, torch.int64)


def _check_record(stype, shape, parts, where):
    """The checks a record's fields need before any is used (a crafted file may hold
    anything a weights-only load admits)."""
    if stype not in (DEFAULT, CSR, ROW_SPARSE):
        raise FileFormatError(f"{where}: unknown storage type {str(stype)[:40]!r}")
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise FileFormatError(f"{where}: the shape {shape!r} is not non-negative integers")
    want = {DEFAULT: 1, CSR: 3, ROW_SPARSE: 2}[stype]
    if not isinstance(parts, (list, tuple)) or len(parts) != want or not all(
            isinstance(t, torch.Tensor) for t in parts):
        raise FileFormatError(f"{where}: a {stype} array is stored as {want} tensor(s), got "
                              f"{type(parts).__name__}")
    for t in parts:
        if t.device.type != "cpu" or t.layout != torch.strided:
            raise FileFormatError(f"{where}: a stored tensor is on {t.device.type} with layout "
                                  f"{t.layout}; a file holds dense CPU tensors")
    if parts[0].dtype not in mxnet_format.DTYPES:
        raise FileFormatError(f"{where}: the values' dtype {parts[0].dtype} is not one "
                              f"sparsenet holds (an MXNet type flag's)")
    for t in parts[1:]:
        if t.dtype not in _INDEX_DTYPES:
            raise FileFormatError(f"{where}: {stype} indices must be int32 or int64, got "
                                  f"{t.dtype}")


def _decode_array(rec, where="<pickle>"):
    try:
        stype, shape, parts = rec["stype"], tuple(rec["shape"]), rec["parts"]
    except (KeyError, TypeError, ValueError):
        raise FileFormatError(f"{where}: malformed array record") from None
    _check_record(stype, shape, parts, where)
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
                raise InvalidArgumentTypeError(f"save: dict keys must be str, got "
                                               f"{type(k).__name__} {k!r}")
        return {"format": FORMAT, "version": VERSION, "kind": "dict", "keys": keys,
                "arrays": [_encode_array(data[k]) for k in keys]}
    if isinstance(data, (list, tuple)):
        return {"format": FORMAT, "version": VERSION, "kind": "list",
                "arrays": [_encode_array(a) for a in data]}
    raise InvalidArgumentTypeError(f"save: expected an NDArray, a list of NDArrays or a dict "
                                   f"str -> NDArray, got {type(data).__name__}")


def save(fname, data, format="mxnet"):
    """Save an NDArray, a list of NDArrays or a dict ``str -> NDArray`` to ``fname``.

    Storage types are kept. The write is atomic: a crash leaves the previous
    file intact.

    Parameters
    ----------
    fname : str or os.PathLike
    data : NDArray, list of NDArray or dict of str to NDArray
    format : {'mxnet', 'sparsenet'}
        ``'mxnet'`` (default): MXNet 1.x's NDArray format, byte for byte what MXNet 1.9.1's
        ``mx.nd.save`` writes. ``'sparsenet'``: the checksummed torch archive.

    Examples
    --------
    >>> import os, tempfile, sparsenet as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'x.nd')
    >>> mx.nd.save(p, [mx.nd.ones((2,))])
    >>> mx.nd.load(p)[0].asnumpy()
    array([1., 1.], dtype=float32)
    """
    atomic_write(fname, _writer(data, format))


def save_to_bytes(data, format="mxnet"):
    """The bytes :func:`save` would write."""
    buf = io.BytesIO()
    _writer(data, format)(buf)
    return buf.getvalue()


def _load_mxnet(f, size, where, ctx):
    arrays, names = mxnet_format.read_arrays(f, size, where)
    if ctx is not None:
        arrays = [a.as_in_context(ctx) for a in arrays]
    if names:
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise FileFormatError(f"{where}: the name {dup!r} appears twice")
        return dict(zip(names, arrays))
    return arrays


def _unpack(payload, where, ctx):
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise FileFormatError(f"{where}: not a sparsenet array file")
    version = payload.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise FileFormatError(f"{where}: the format version {str(version)[:20]!r} is not an "
                              f"integer")
    if version > VERSION:
        raise FileFormatError(f"{where}: written by a newer sparsenet (format version "
                              f"{version} > {VERSION})")
    arrays = payload.get("arrays", [])
    if not isinstance(arrays, list):
        raise FileFormatError(f"{where}: 'arrays' is a {type(arrays).__name__}, not a list")
    if payload.get("kind") == "dict":
        keys = payload.get("keys", [])
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise FileFormatError(f"{where}: the keys are not a list of strings")
        if len(set(keys)) != len(keys):
            dup = next(k for k in keys if keys.count(k) > 1)
            raise FileFormatError(f"{where}: the key {dup!r} appears twice")
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

    Reads MXNet 1.x's NDArray files (``.params``, ``.nd``; every version MXNet 1.x reads) and
    sparsenet's own archives, told apart by their first bytes. Raises
    :class:`~sparsenet.base.FileFormatError` naming the file, the array and (MXNet's format)
    the byte offset when the file is truncated, corrupt or holds invalid sparse parts, and
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
    size = os.path.getsize(fname)
    if size == 0:
        raise FileFormatError(f"{fname}: the file is empty")
    with open(fname, "rb") as f:
        if mxnet_format.is_mxnet_file(f.read(8)):
            f.seek(0)
            return _load_mxnet(f, size, fname, ctx)
    try:
        payload = torch.load(fname, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises RuntimeError/UnpicklingError/EOFError variants
        # torch's own message may advise an unsafe load: never pass it on
        raise FileFormatError(f"{fname}: cannot read the file ({type(e).__name__}): it is "
                              f"neither an MXNet NDArray file (magic 0x112) nor a complete "
                              f"sparsenet archive; first bytes {_head(fname)}") from None
    return _unpack(payload, fname, ctx)


def _head(fname):
    with open(fname, "rb") as f:
        return f.read(8).hex()


def load_from_bytes(buf, ctx=None):
    """Load arrays from bytes produced by :func:`save_to_bytes` (either format)."""
    if mxnet_format.is_mxnet_file(bytes(buf[:8])):
        return _load_mxnet(io.BytesIO(buf), len(buf), "<bytes>", ctx)
    try:
        payload = torch.load(io.BytesIO(buf), map_location="cpu", weights_only=True)
    except Exception as e:
        raise FileFormatError(f"<bytes>: cannot read ({type(e).__name__})") from None
    return _unpack(payload, "<bytes>", ctx)
