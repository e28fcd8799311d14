"""MXNet 1.x's NDArray file format (``.params``, ``.nd``): our own reader and writer.

The layout, as MXNet 1.9.1 writes it (every number little-endian):

* list header: ``uint64`` magic ``0x112``, ``uint64`` reserved (0), ``uint64`` array count;
* each array: ``uint32`` magic (V2 ``0xF993FAC9`` from ``mx.nd.save``, V3 ``0xF993FACA`` from
  ``mx.npx.save``; V1 ``0xF993FAC8`` and the magic-less V0 of older releases are read too),
  ``int32`` storage type (V2/V3), the storage shape when sparse, the shape (``int32`` ndim then
  ``int64`` dims; V0: ``uint32`` dims), the context (``int32`` device type, ``int32`` id), the
  ``int32`` dtype flag, for sparse arrays each aux array's ``int32`` dtype flag and shape, then the
  values (storage shape) and the aux arrays (CSR: indptr, indices; row_sparse: indices);
* the names: ``uint64`` count, then per name ``uint64`` length and UTF-8 bytes (none for a list).

Nothing is allocated before its size is checked against the bytes left in the file, and every
problem raises :class:`~sparsenet.base.FileFormatError` naming the file, the array (index and
name) and the byte offset.

>>> import io, sparsenet as mx
>>> buf = io.BytesIO()
>>> write_arrays(buf, [mx.nd.ones((2,))], [])
>>> buf.getvalue()[:8].hex()
'1201000000000000'
>>> arrays, names = read_arrays(io.BytesIO(buf.getvalue()), len(buf.getvalue()))
>>> arrays[0].asnumpy(), names
(array([1., 1.], dtype=float32), [])
"""
import struct
import sys
import threading

import numpy as np
import torch

from ..base import FileFormatError, InvalidArgumentTypeError, SparseFormatError
from .csr import CSRNDArray
from .ndarray import NDArray
from .row_sparse import RowSparseNDArray
from .stype import CSR, DEFAULT, ROW_SPARSE, check_csr, csr_invariants_hold

__all__ = ["LIST_MAGIC", "V1_MAGIC", "V2_MAGIC", "V3_MAGIC", "DTYPES", "read_arrays",
           "read_single", "write_arrays", "is_mxnet_file"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_MAX_LEGACY_NDIM = 32  # a V0 array starts with its ndim; anything larger is a corrupt magic

# mshadow's type flags (MXNet 1.9.1 3rdparty/mshadow/mshadow/base.h)
_FLAG_TO_TORCH = {0: torch.float32, 1: torch.float64, 2: torch.float16, 3: torch.uint8,
                  4: torch.int32, 5: torch.int8, 6: torch.int64, 7: torch.bool, 8: torch.int16,
                  12: torch.bfloat16}
_TORCH_TO_FLAG = {v: k for k, v in _FLAG_TO_TORCH.items()}
#: the torch dtypes an MXNet NDArray file holds (each has a type flag)
DTYPES = tuple(_FLAG_TO_TORCH.values())
_INDEX_FLAGS = (3, 4, 5, 6, 8)  # integer flags an aux (index) array may have
_STYPE_IDS = {0: DEFAULT, 1: ROW_SPARSE, 2: CSR}
_STYPE_TO_ID = {v: k for k, v in _STYPE_IDS.items()}
_NUM_AUX = {DEFAULT: 0, ROW_SPARSE: 1, CSR: 2}
_DEV_TYPES = {1, 2, 3, 5}  # cpu, gpu, cpu_pinned, cpu_shared
_BIG_ENDIAN_HOST = sys.byteorder == "big"
#: A CSR array with at least this many stored values is checked in a second thread while its
#: values are read (the check needs only the index arrays, which are read first)
_OVERLAP_NNZ = 1 << 20


def is_mxnet_file(head):
    """Whether ``head`` (the first bytes of a file) starts MXNet's NDArray list format.

    >>> is_mxnet_file(bytes.fromhex('1201000000000000'))
    True
    >>> is_mxnet_file(b'PK\\x03\\x04')
    False
    """
    return len(head) >= 8 and struct.unpack_from("<Q", head)[0] == LIST_MAGIC


class _Reader:
    """Reads little-endian fields from a binary file, checking every size against the file."""

    def __init__(self, f, size, where):
        self.f, self.size, self.where = f, size, where
        self.pos = 0
        self.what = "the list header"

    def fail(self, problem, at=None):
        at = self.pos if at is None else at
        raise FileFormatError(f"{self.where}: {self.what}: {problem} (at byte offset {at}); "
                              f"not an MXNet NDArray file, or a truncated or corrupt one")

    def left(self):
        return self.size - self.pos

    def seek(self, pos):
        self.f.seek(pos)
        self.pos = pos

    def raw(self, n, field):
        if n > self.left():
            self.fail(f"{field} needs {n} bytes, only {self.left()} left in the file")
        b = self.f.read(n)
        if len(b) != n:
            self.fail(f"{field}: the file ended early")
        self.pos += n
        return b

    def num(self, fmt, field):
        return struct.unpack("<" + fmt, self.raw(struct.calcsize(fmt), field))[0]

    def shape(self, field, legacy_ndim=None):
        if legacy_ndim is not None:  # V0: the magic was the ndim, dims are uint32
            ndim, fmt = legacy_ndim, "I"
        else:
            start = self.pos
            ndim, fmt = self.num("i", f"{field} ndim"), "q"
            if ndim == -1:
                self.fail(f"{field} is unknown (an uninitialized array, which MXNet 1.9.1 "
                          f"cannot save either)", start)
            if not 0 <= ndim <= _MAX_LEGACY_NDIM:
                self.fail(f"{field} has ndim {ndim}, expected 0..{_MAX_LEGACY_NDIM}", start)
        start = self.pos
        dims = struct.unpack(f"<{ndim}{fmt}", self.raw(ndim * struct.calcsize(fmt), field))
        if any(d < 0 for d in dims):
            self.fail(f"{field} {dims} has a negative dimension", start)
        return tuple(dims)

    def nbytes(self, shape, dtype, field):
        """The bytes of an array of ``shape`` and ``dtype``, checked against the file."""
        count = 1
        for d in shape:
            count *= d
        nbytes = count * torch.empty((), dtype=dtype).element_size()
        if nbytes > self.left():
            self.fail(f"{field} of shape {shape} ({dtype}) needs {nbytes} bytes, only "
                      f"{self.left()} left in the file")
        return nbytes

    def tensor(self, shape, dtype, field):
        nbytes = self.nbytes(shape, dtype, field)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if not nbytes:
            return torch.empty(shape, dtype=dtype)
        # torch's allocator, not NumPy's: NumPy asks the kernel for huge pages on big arrays,
        # which is faster only when free huge pages exist and otherwise stalls in compaction
        # (measured reading 512 MB: torch 0.23-0.25 s every time, NumPy 0.13-1.4 s)
        buf = torch.empty(nbytes, dtype=torch.uint8)
        got = self.f.readinto(memoryview(buf.numpy()))  # one read into the array's memory
        if got != nbytes:
            self.fail(f"{field}: the file ended early")
        out = buf.view(dtype)
        if _BIG_ENDIAN_HOST and itemsize > 1:
            out = torch.from_numpy(out.numpy().byteswap())
        self.pos += nbytes
        return out.reshape(shape)


def _dtype(r, flag, at, field):
    try:
        return _FLAG_TO_TORCH[flag]
    except KeyError:
        r.fail(f"{field} type flag {flag} is not one of {sorted(_FLAG_TO_TORCH)}", at)


def _read_one(r):
    start = r.pos
    magic = r.num("I", "array magic")
    legacy_ndim = None
    if magic in (V2_MAGIC, V3_MAGIC):
        at = r.pos
        sid = r.num("i", "storage type")
        if sid not in _STYPE_IDS or (magic == V3_MAGIC and sid != 0):
            r.fail(f"storage type {sid} is not one of 0 (default), 1 (row_sparse), 2 (csr)"
                   + (" (a V3 array is dense)" if magic == V3_MAGIC else ""), at)
        stype = _STYPE_IDS[sid]
    elif magic == V1_MAGIC or magic <= _MAX_LEGACY_NDIM:
        stype = DEFAULT
        legacy_ndim = None if magic == V1_MAGIC else magic
    else:
        r.fail(f"array magic 0x{magic:08X} is none of V1 0x{V1_MAGIC:08X}, V2 0x{V2_MAGIC:08X}, "
               f"V3 0x{V3_MAGIC:08X}", start)
    nad = _NUM_AUX[stype]
    sshape = r.shape("storage shape") if nad else None
    shape = r.shape("shape", legacy_ndim)
    at = r.pos
    dev_type = r.num("i", "context device type")
    r.num("i", "context device id")  # arrays load on the CPU or the caller's ctx
    if dev_type not in _DEV_TYPES:
        r.fail(f"context device type {dev_type} is not one of {sorted(_DEV_TYPES)}", at)
    at = r.pos
    dtype = _dtype(r, r.num("i", "dtype flag"), at, "dtype")
    aux = []
    for i in range(nad):
        at = r.pos
        flag = r.num("i", f"aux {i} dtype flag")
        if flag not in _INDEX_FLAGS:
            r.fail(f"aux {i} type flag {flag} is not an integer type {list(_INDEX_FLAGS)}", at)
        aux.append((_FLAG_TO_TORCH[flag], r.shape(f"aux {i} shape")))
    _check_sparse_shapes(r, stype, shape, sshape, [s for _, s in aux], start)
    if stype == CSR and sshape[0] >= _OVERLAP_NNZ and r.f.seekable():
        values, parts, checked = _read_csr_overlapped(r, sshape, dtype, aux, shape[1])
    else:
        values = r.tensor(sshape if nad else shape, dtype, "values")
        parts = [r.tensor(s, dt, f"aux {i}").to(torch.int64) for i, (dt, s) in enumerate(aux)]
        checked = False
    if stype == DEFAULT:
        return NDArray(values)
    try:
        if stype == CSR:
            indptr, indices = parts
            check_csr(values, indices, indptr, shape, full=not checked)
            return CSRNDArray(values, indices, indptr, shape, validate=False)
        return RowSparseNDArray(values, parts[0], shape)
    except (SparseFormatError, ValueError) as e:
        r.fail(f"invalid {stype} parts: {e}", start)


def _read_csr_overlapped(r, sshape, dtype, aux, cols):
    """A big CSR array's ``(values, [indptr, indices], checked)``: the index arrays first
    (after the values in the file), then the values while another thread runs
    :func:`~sparsenet.ndarray.stype.csr_invariants_hold` on the indices (both release the
    GIL). ``checked``: the O(nnz) invariants hold (else the caller's full check finds and
    names the first problem)."""
    at_values = r.pos
    r.seek(at_values + r.nbytes(sshape, dtype, "values"))
    parts = [r.tensor(s, dt, f"aux {i}").to(torch.int64) for i, (dt, s) in enumerate(aux)]
    end = r.pos
    result = []
    worker = threading.Thread(target=lambda: result.append(
        csr_invariants_hold(parts[1], parts[0], cols)), daemon=True)
    worker.start()
    try:
        r.seek(at_values)
        values = r.tensor(sshape, dtype, "values")
    finally:
        worker.join()
    r.seek(end)
    return values, parts, bool(result and result[0])


def _check_sparse_shapes(r, stype, shape, sshape, aux_shapes, start):
    if stype == CSR:
        if len(shape) != 2 or len(sshape) != 1:
            r.fail(f"csr shape {shape} / storage shape {sshape}: expected 2-d / 1-d", start)
        if aux_shapes != [(shape[0] + 1,), sshape]:
            r.fail(f"csr indptr/indices shapes {aux_shapes}, expected "
                   f"[{(shape[0] + 1,)}, {sshape}] for shape {shape} with {sshape[0]} values",
                   start)
    elif stype == ROW_SPARSE:
        if len(shape) < 1 or len(sshape) != len(shape) or sshape[1:] != shape[1:]:
            r.fail(f"row_sparse storage shape {sshape} does not match shape {shape}", start)
        if aux_shapes != [sshape[:1]]:
            r.fail(f"row_sparse indices shape {aux_shapes[0]}, expected {sshape[:1]}", start)


def read_arrays(f, size, where="<bytes>"):
    """Read an MXNet NDArray list from the binary file ``f`` of ``size`` bytes.

    Returns ``(arrays, names)``; ``names`` is empty when the file holds a list.

    Parameters
    ----------
    f : binary file object, positioned at the start
    size : int
        The file's size in bytes (every declared size is checked against it).
    where : str
        The file's name, for error messages.

    Examples
    --------
    >>> import io
    >>> read_arrays(io.BytesIO(b'\\x00' * 4), 4, 'x.params')
    Traceback (most recent call last):
    ...
    sparsenet.base.FileFormatError: x.params: the list header: magic needs 8 bytes, only 4 left in the file (at byte offset 0); not an MXNet NDArray file, or a truncated or corrupt one
    """
    r = _Reader(f, size, where)
    magic = r.num("Q", "magic")
    if magic != LIST_MAGIC:
        r.fail(f"magic 0x{magic:X}, expected 0x{LIST_MAGIC:X}", 0)
    r.num("Q", "reserved field")
    count = r.num("Q", "array count")
    if count * 12 > r.left():  # every array takes at least 12 bytes
        r.fail(f"{count} arrays declared, the {r.left()} bytes left cannot hold them", 16)
    arrays = []
    for i in range(count):
        r.what = f"array {i}"
        arrays.append(_read_one(r))
    r.what = "the names"
    n = r.num("Q", "name count")
    if n not in (0, count):
        r.fail(f"{n} names for {count} arrays", r.pos - 8)
    names = []
    for i in range(n):
        r.what = f"name {i}"
        length = r.num("Q", "length")
        at = r.pos
        try:
            names.append(r.raw(length, "name").decode("utf-8"))
        except UnicodeDecodeError:
            r.fail("the name is not UTF-8", at)
    if r.left():
        r.what = "the end of the file"
        r.fail(f"{r.left()} unexpected bytes after the last name")
    return arrays, names


def read_single(f, size, where="<bytes>"):
    """Read one array saved without the list header (MXNet's ``MXNDArraySaveRawBytes``,
    the state an MXNet NDArray pickles to).

    Examples
    --------
    >>> import io, sparsenet as mx
    >>> buf = io.BytesIO()
    >>> write_arrays(buf, [mx.nd.array([1, 2])], [])
    >>> raw = buf.getvalue()[24:-8]  # the array without the list's header and names
    >>> read_single(io.BytesIO(raw), len(raw)).asnumpy()
    array([1., 2.], dtype=float32)
    """
    r = _Reader(f, size, where)
    r.what = "the array"
    arr = _read_one(r)
    if r.left():
        r.fail(f"{r.left()} unexpected bytes after the array")
    return arr


def _shape_bytes(shape):
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _le_bytes(t):
    a = t.detach().cpu().contiguous()
    if a.dtype == torch.bfloat16:
        a = a.view(torch.int16)
    n = a.numpy()
    if _BIG_ENDIAN_HOST and n.dtype.itemsize > 1:
        n = n.byteswap()
    return memoryview(n.reshape(-1).view(np.uint8))


def _write_one(f, arr):
    if not isinstance(arr, NDArray):
        raise InvalidArgumentTypeError(f"save: expected NDArray values, got {type(arr).__name__}")
    stype = arr.stype
    if stype == DEFAULT:
        values, aux = arr._t, []
    else:
        data, *rest = arr._parts()
        values = data
        aux = rest if stype == ROW_SPARSE else [rest[1], rest[0]]  # csr: indptr, indices
    flag = _TORCH_TO_FLAG.get(values.dtype)
    if flag is None:
        raise InvalidArgumentTypeError(
            f"save: a {str(values.dtype).replace('torch.', '')} array has no MXNet type flag: "
            f"expected one of {', '.join(str(d).replace('torch.', '') for d in DTYPES)}")
    ctx = arr.context
    # MXNet's legacy-shape V2 reader takes ndim 0 for "no array": a 0-d array goes as V3
    magic = V3_MAGIC if len(arr.shape) == 0 else V2_MAGIC
    head = [struct.pack("<Ii", magic, _STYPE_TO_ID[stype])]
    if aux:
        head.append(_shape_bytes(tuple(values.shape)))
    head.append(_shape_bytes(tuple(arr.shape)))
    head.append(struct.pack("<iii", ctx.device_typeid, ctx.device_id, flag))
    for a in aux:
        head.append(struct.pack("<i", _TORCH_TO_FLAG[a.dtype]) + _shape_bytes(tuple(a.shape)))
    f.write(b"".join(head))
    for t in [values] + aux:
        if t.numel():
            f.write(_le_bytes(t))


def write_arrays(f, arrays, names):
    """Write ``arrays`` (and their ``names``, empty for a list) in MXNet 1.9.1's format.

    The bytes equal those of MXNet 1.9.1's ``mx.nd.save`` for the same arrays.

    Parameters
    ----------
    f : binary file object
    arrays : list of NDArray
    names : list of str
        Empty, or one name per array.

    Examples
    --------
    >>> import io, sparsenet as mx
    >>> buf = io.BytesIO()
    >>> write_arrays(buf, [mx.nd.array([7], dtype='int32')], ['bb'])
    >>> len(buf.getvalue())
    78
    """
    f.write(struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays)))
    for a in arrays:
        _write_one(f, a)
    f.write(struct.pack("<Q", len(names)))
    for n in names:
        b = n.encode("utf-8")
        f.write(struct.pack("<Q", len(b)) + b)
