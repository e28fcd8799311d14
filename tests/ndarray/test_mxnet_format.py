"""MXNet 1.9.1's NDArray file format: fixtures written by MXNet, byte-equal writes, hostile files."""
import io
import os
import struct

import numpy as np
import pytest
import scipy.sparse

import sparsenet as mx
from sparsenet.base import FileFormatError
from sparsenet.ndarray import mxnet_format

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "mxnet_1_9_1")
DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]


def _fixture(name):
    return os.path.join(DATA, name)


def _dense(dt):  # the formula make_fixtures.py used
    base = np.arange(6).reshape(2, 3)
    return (base % 2).astype(dt) if dt == "bool" else (base - 2).astype(dt)


def _sparse_arrays():
    return {
        "csr": mx.nd.sparse.csr_matrix(([1.5, -2.0, 3.0], [1, 0, 3], [0, 1, 1, 3]), shape=(3, 4)),
        "rsp": mx.nd.sparse.row_sparse_array(
            (np.array([[1, 2], [3, 4]], dtype="float64"), [1, 4]), shape=(6, 2)),
        "csr_f16": mx.nd.sparse.csr_matrix(([0.5], [2], [0, 0, 1]), shape=(2, 3), dtype="float16"),
        "csr_empty": mx.nd.sparse.zeros("csr", (3, 4)),
        "rsp_empty": mx.nd.sparse.zeros("row_sparse", (5, 2)),
        "dense_empty": mx.nd.array(np.zeros((0, 3), dtype="float32")),
    }


def _same(a, b):
    assert (a.stype, a.shape, a.dtype) == (b.stype, b.shape, b.dtype)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


@pytest.mark.parametrize("dt", DTYPES)
def test_every_dtype_loads_with_mxnet_values(dt):
    loaded = mx.nd.load(_fixture("dtypes.params"))
    assert list(loaded) == DTYPES  # the file's order
    a = loaded[dt]
    assert a.stype == "default" and a.dtype == np.dtype(dt)
    np.testing.assert_array_equal(a.asnumpy(), _dense(dt))


def test_sparse_and_empty_arrays_load():
    loaded = mx.nd.load(_fixture("sparse.params"))
    for k, want in _sparse_arrays().items():
        _same(loaded[k], want)
    np.testing.assert_array_equal(loaded["csr"].indptr.asnumpy(), [0, 1, 1, 3])
    np.testing.assert_array_equal(loaded["rsp"].indices.asnumpy(), [1, 4])


def test_list_empty_list_and_v3_scalar():
    a, c, r = mx.nd.load(_fixture("list.nd"))
    _same(a, mx.nd.array(_dense("float32")))
    _same(c, _sparse_arrays()["csr"])
    _same(r, _sparse_arrays()["rsp"])
    assert mx.nd.load(_fixture("empty_list.nd")) == []
    (s,) = mx.nd.load(_fixture("scalar_v3.nd"))  # mx.npx.save: V3 magic, ndim 0
    assert s.shape == () and s.asscalar() == 5.0


@pytest.mark.parametrize("name", ["dtypes.params", "sparse.params", "list.nd", "empty_list.nd",
                                  "scalar_v3.nd"])
def test_save_writes_mxnet_bytes(name, tmp_path):
    """sparsenet's bytes equal MXNet 1.9.1's for the same arrays, so MXNet loads them."""
    raw = open(_fixture(name), "rb").read()
    data = mx.nd.load(_fixture(name))
    assert mx.nd.save_to_bytes(data) == raw
    mx.nd.save(tmp_path / "x", data)
    assert (tmp_path / "x").read_bytes() == raw


def test_bytes_built_by_hand_match_the_layout():
    """The layout, written out field by field (MXNet 1.9.1's mx.nd.save of [int32 [7]] named 'bb')."""
    want = (struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<Iii", 0xF993FAC9, 0, 1)
            + struct.pack("<q", 1) + struct.pack("<iii", 1, 0, 4) + struct.pack("<i", 7)
            + struct.pack("<QQ", 1, 2) + b"bb")
    assert mx.nd.save_to_bytes({"bb": mx.nd.array([7], dtype="int32")}) == want


def _v1(shape, values):  # MXNet < 1.0: V1 magic, no storage type
    return (struct.pack("<I", 0xF993FAC8) + struct.pack(f"<i{len(shape)}q", len(shape), *shape)
            + struct.pack("<iii", 1, 0, 0) + np.asarray(values, "<f4").tobytes())


def _v0(shape, values):  # older still: the magic is the ndim, dims are uint32
    return (struct.pack(f"<I{len(shape)}I", len(shape), *shape) + struct.pack("<iii", 1, 0, 0)
            + np.asarray(values, "<f4").tobytes())


def test_legacy_v1_and_v0_arrays():
    buf = (struct.pack("<QQQ", 0x112, 0, 2) + _v1((2,), [1, 2]) + _v0((1, 2), [3, 4])
           + struct.pack("<Q", 0))
    a, b = mx.nd.load_from_bytes(buf)
    np.testing.assert_array_equal(a.asnumpy(), [1, 2])
    np.testing.assert_array_equal(b.asnumpy(), [[3, 4]])


def test_big_endian_file_values_are_little_endian():
    raw = mx.nd.save_to_bytes([mx.nd.array([1.0], dtype="float64")])
    assert raw[-16:-8] == struct.pack("<d", 1.0)


# ---------------------------------------------------------------- hostile files
def _boundaries(raw):
    """Every header boundary of a one-csr-array file written by MXNet 1.9.1 (csr.nd layout)."""
    return [0, 4, 8, 16, 24, 28, 32, 36, 44, 48, 64, 68, 72, 76, 80, 84, 92, 96, 100, 108,
            len(raw) - 8, len(raw) - 1]


def test_truncated_at_every_boundary(tmp_path):
    raw = mx.nd.save_to_bytes({"c": _sparse_arrays()["csr"]})
    p = tmp_path / "t.params"
    for cut in _boundaries(raw) + list(range(1, len(raw))):
        p.write_bytes(raw[:cut])
        # under 8 bytes the list magic is incomplete: not recognisable as MXNet's
        match = r"t\.params: .*byte offset \d+" if cut >= 8 else r"t\.params: (the file is " \
            r"empty|cannot read the file .* neither an MXNet NDArray file)"
        with pytest.raises(FileFormatError, match=match) as e:
            mx.nd.load(p)
        assert "weights_only" not in str(e.value)


def test_errors_name_the_array_and_offset():
    raw = bytearray(mx.nd.save_to_bytes([mx.nd.ones((2,)), mx.nd.ones((2,))]))
    second = 24 + 40  # list header + first array (4+4+4+8+8+4 header bytes, 8 of data)
    raw[second:second + 4] = b"\x01\x02\x03\xff"
    with pytest.raises(FileFormatError, match=r"array 1: array magic 0xFF030201 .* offset 64"):
        mx.nd.load_from_bytes(bytes(raw))
    named = bytearray(mx.nd.save_to_bytes({"w": mx.nd.ones((2,))}))
    named[-1:] = b"\xff"
    with pytest.raises(FileFormatError, match="name 0: the name is not UTF-8"):
        mx.nd.load_from_bytes(bytes(named))


def test_wrong_list_magic_and_foreign_file(tmp_path):
    with pytest.raises(FileFormatError, match=r"magic 0x113, expected 0x112"):
        mxnet_format.read_arrays(io.BytesIO(struct.pack("<QQQ", 0x113, 0, 0)), 24, "x")
    p = tmp_path / "f.params"
    p.write_bytes(b"PK\x03\x04 not an array file at all")
    with pytest.raises(FileFormatError, match="neither an MXNet NDArray file") as e:
        mx.nd.load(p)
    assert "weights_only" not in str(e.value)


def test_huge_declared_sizes_allocate_nothing():
    head = struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<Ii", 0xF993FAC9, 0)
    huge = head + struct.pack("<iq", 1, 2 ** 40) + struct.pack("<iii", 1, 0, 0)
    assert len(huge) < 64
    with pytest.raises(FileFormatError, match=r"values of shape \(1099511627776,\).*needs "
                                              r"4398046511104 bytes, only \d+ left"):
        mx.nd.load_from_bytes(huge)
    many = struct.pack("<QQQ", 0x112, 0, 2 ** 62)
    with pytest.raises(FileFormatError, match="arrays declared"):
        mx.nd.load_from_bytes(many)
    neg = head + struct.pack("<iq", 1, -5) + struct.pack("<iii", 1, 0, 0)
    with pytest.raises(FileFormatError, match="negative dimension"):
        mx.nd.load_from_bytes(neg)
    bad_ndim = head + struct.pack("<i", 1000)
    with pytest.raises(FileFormatError, match="ndim 1000"):
        mx.nd.load_from_bytes(bad_ndim)
    long_name = bytearray(mx.nd.save_to_bytes({"w": mx.nd.ones((1,))}))
    long_name[-9:-1] = struct.pack("<Q", 2 ** 50)
    long_name = bytes(long_name[:-1])
    with pytest.raises(FileFormatError, match="name needs 1125899906842624 bytes"):
        mx.nd.load_from_bytes(long_name)


def _csr_bytes(indptr, indices, shape=(2, 3), aux_shapes=None):
    data = np.ones(len(indices), "<f4")
    ip, ix = np.asarray(indptr, "<i8"), np.asarray(indices, "<i8")
    a0, a1 = aux_shapes or ((len(ip),), (len(ix),))
    return (struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<Ii", 0xF993FAC9, 2)
            + struct.pack("<iq", 1, len(data)) + struct.pack("<iqq", 2, *shape)
            + struct.pack("<iii", 1, 0, 0) + struct.pack("<iiq", 6, 1, a0[0])
            + struct.pack("<iiq", 6, 1, a1[0]) + data.tobytes() + ip.tobytes() + ix.tobytes()
            + struct.pack("<Q", 0))


def test_inconsistent_sparse_parts():
    _same(mx.nd.load_from_bytes(_csr_bytes([0, 1, 2], [0, 2]))[0],
          mx.nd.sparse.csr_matrix(([1.0, 1.0], [0, 2], [0, 1, 2]), shape=(2, 3)))
    with pytest.raises(FileFormatError, match="array 0: invalid csr parts"):
        mx.nd.load_from_bytes(_csr_bytes([0, 2, 1], [0, 2]))  # indptr not monotone
    with pytest.raises(FileFormatError, match="array 0: invalid csr parts"):
        mx.nd.load_from_bytes(_csr_bytes([0, 1, 2], [0, 7]))  # column out of range
    with pytest.raises(FileFormatError, match="csr indptr/indices shapes"):
        mx.nd.load_from_bytes(_csr_bytes([0, 1, 2, 2], [0, 2]))  # indptr for 3 rows
    rsp = bytearray(mx.nd.save_to_bytes([_sparse_arrays()["rsp"]]))
    idx = len(rsp) - 8 - 16  # the two row indices [1, 4] -> [4, 1]
    rsp[idx:idx + 16] = struct.pack("<qq", 4, 1)
    with pytest.raises(FileFormatError, match="invalid row_sparse parts"):
        mx.nd.load_from_bytes(bytes(rsp))


def test_unknown_flags_and_trailing_bytes():
    raw = bytearray(mx.nd.save_to_bytes([mx.nd.ones((1,))]))
    bad = bytearray(raw)
    bad[24 + 4:24 + 8] = struct.pack("<i", 9)
    with pytest.raises(FileFormatError, match="storage type 9"):
        mx.nd.load_from_bytes(bytes(bad))
    bad = bytearray(raw)
    bad[24 + 28:24 + 32] = struct.pack("<i", 42)
    with pytest.raises(FileFormatError, match="dtype type flag 42"):
        mx.nd.load_from_bytes(bytes(bad))
    with pytest.raises(FileFormatError, match="4 unexpected bytes"):
        mx.nd.load_from_bytes(bytes(raw) + b"\0\0\0\0")


def _big_csr(rows=300_000, per_row=4, seed=0):
    """A CSR matrix past the loader's overlap threshold (2**20 stored values), from SciPy."""
    rng = np.random.default_rng(seed)
    cols = 50_000
    indices = np.sort(rng.choice(cols // per_row, size=(rows, per_row), replace=True)
                      + np.arange(per_row) * (cols // per_row), axis=1).ravel()
    indptr = np.arange(0, rows * per_row + 1, per_row)
    data = rng.standard_normal(rows * per_row).astype(np.float32)
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(rows, cols))


def test_a_big_csr_loads_with_its_check_overlapped(tmp_path):
    # the indices are checked in a second thread while the values are read: same arrays
    ref = _big_csr()
    path = str(tmp_path / "big.params")
    mx.nd.save(path, {"c": mx.nd.sparse.csr_matrix(ref)})
    got = mx.nd.load(path)["c"]
    assert got.stype == "csr" and got.shape == ref.shape
    np.testing.assert_array_equal(got.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(got.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(got.data.asnumpy(), ref.data)


@pytest.mark.parametrize("problem, value, message", [
    ("duplicate", None, r"duplicate column index \d+ at position 700001"),
    ("out of range", 10**9, r"column index 1000000000 at position 700001"),
])
def test_a_big_corrupt_csr_names_its_first_problem(tmp_path, problem, value, message):
    ref = _big_csr()
    indices = ref.indices.copy()
    k = 700_001  # inside a row (4 values per row), past the first million bytes
    indices[k] = indices[k - 1] if value is None else value
    path = str(tmp_path / "bad.params")
    bad = mx.nd.sparse.csr_matrix((ref.data, indices, ref.indptr), shape=ref.shape,
                                  validate=False)
    mx.nd.save(path, {"c": bad})
    with pytest.raises(FileFormatError, match=message) as info:
        mx.nd.load(path)
    assert path in str(info.value) and "array 0" in str(info.value)
