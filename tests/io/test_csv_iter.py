"""mx.io.CSVIter: MXNet 1.9.1's batches, pads, labels and dtypes; validated input."""
import gzip

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.io.csv_format import read_csv

FOUR = "1,2,3\n2,3,4\n3,4,5\n4,5,6\n"


@pytest.fixture
def csv(tmp_path):
    """csv(text, name='d.csv') -> path of a file holding ``text``."""
    def _csv(text, name="d.csv"):
        p = tmp_path / name
        p.write_bytes(text.encode() if isinstance(text, str) else text)
        return str(p)
    return _csv


def _epoch(it):
    return [(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad,
             [int(i) for i in b.index]) for b in it]


def test_round_batch_pads_from_the_start(csv):
    it = mx.io.CSVIter(data_csv=csv(FOUR), data_shape=(3,), batch_size=3)
    # measured with MXNet 1.9.1 (first epoch): pad 2, rows 0 and 1 repeated, labels 0
    first = [([[1, 2, 3], [2, 3, 4], [3, 4, 5]], [0, 0, 0], 0, [0, 1, 2]),
             ([[4, 5, 6], [1, 2, 3], [2, 3, 4]], [0, 0, 0], 2, [3, 0, 1])]
    assert _epoch(it) == first
    assert it.provide_data == [mx.io.DataDesc("data", (3, 3))]
    assert it.provide_label == [mx.io.DataDesc("softmax_label", (3,))]
    # MXNet 1.9.1 consumes the padding rows: its next epochs start at rows 2, then 1
    # (measured); here every epoch starts at row 0 (docs/differences.md)
    it.reset()
    assert _epoch(it) == first
    it.reset()
    assert _epoch(it) == first


def test_batch_larger_than_the_file_wraps_every_epoch(csv):
    it = mx.io.CSVIter(data_csv=csv(FOUR), data_shape=(3,), batch_size=6)
    # measured with MXNet 1.9.1 (first epoch): rows 0 1 2 3 0 1, pad 2
    for _ in range(2):  # MXNet's second epoch starts at row 2 with pad 4 (measured)
        (batch,) = list(it)
        assert batch.pad == 2 and list(batch.index) == [0, 1, 2, 3, 0, 1]
        assert batch.data[0].asnumpy()[:, 0].tolist() == [1, 2, 3, 4, 1, 2]
        it.reset()


def test_round_batch_false_gives_a_short_last_batch(csv):
    it = mx.io.CSVIter(data_csv=csv(FOUR), data_shape=(3,), batch_size=3, round_batch=False)
    # MXNet 1.9.1 returns a full (3, 3) batch with pad 2 whose last rows are stale rows of the
    # previous batch (or uninitialised memory when the file is shorter than a batch, measured)
    for _ in range(2):
        batches = list(it)
        assert [b.data[0].shape for b in batches] == [(3, 3), (1, 3)]
        assert batches[1].data[0].asnumpy().tolist() == [[4, 5, 6]]
        assert batches[1].label[0].shape == (1,) and batches[1].pad == 0
        it.reset()


def test_label_csv_and_label_shapes(csv):
    data = csv(FOUR)
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=csv("0\n1\n2\n3\n", "l.csv"),
                       batch_size=2)
    # measured with MXNet 1.9.1
    assert [b.label[0].asnumpy().tolist() for b in it] == [[0, 1], [2, 3]]
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), label_shape=(2,), batch_size=2,
                       label_csv=csv("0,10\n1,11\n2,12\n3,13\n", "l2.csv"))
    assert it.provide_label == [mx.io.DataDesc("softmax_label", (2, 2))]
    assert [b.label[0].asnumpy().tolist() for b in it] == [[[0, 10], [1, 11]], [[2, 12], [3, 13]]]
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), label_shape=(1, 1), batch_size=2,
                       label_csv=csv("0\n1\n2\n3\n", "l.csv"))
    assert it.provide_label[0].shape == (2,) and next(it).label[0].shape == (2,)
    # without label_csv the labels are zeros of shape (batch,), whatever label_shape says
    it = mx.io.CSVIter(data_csv=csv("1,2,3\n4,5,6\n7,8,9\n"), data_shape=(3,), batch_size=3,
                       label_shape=(2,))
    assert it.provide_label[0].shape == (3,)
    assert next(it).label[0].asnumpy().tolist() == [0, 0, 0]


def test_labels_follow_the_wrapped_rows(csv):
    it = mx.io.CSVIter(data_csv=csv("1,2,3\n4,5,6\n7,8,9\n"), data_shape=(3,), batch_size=2,
                       label_csv=csv("1\n2\n3\n", "l.csv"))
    # measured with MXNet 1.9.1
    assert _epoch(it) == [([[1, 2, 3], [4, 5, 6]], [1, 2], 0, [0, 1]),
                          ([[7, 8, 9], [1, 2, 3]], [3, 1], 1, [2, 0])]


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64", None])
def test_data_shape_reshape_and_dtype(csv, dtype):
    it = mx.io.CSVIter(data_csv=csv("1,2,3,4,5,6\n7,8,9,10,11,12\n"), data_shape=(3, 2),
                       batch_size=2, dtype=dtype)
    want = np.dtype(dtype or "float32")
    b = next(it)
    # measured with MXNet 1.9.1 for int32/int64/None (its float64 raises "not supported")
    assert b.data[0].shape == (2, 3, 2) and b.data[0].dtype == want
    assert b.data[0].asnumpy().tolist() == [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]
    assert b.label[0].dtype == want and b.label[0].asnumpy().tolist() == [0, 0]
    assert it.provide_data[0].dtype == want.type and it.provide_label[0].dtype == want.type


def test_data_shape_one_keeps_its_axis(csv):
    it = mx.io.CSVIter(data_csv=csv("1\n2\n3\n"), data_shape=(1,), batch_size=2)
    # measured with MXNet 1.9.1: (2, 1) batches, the second padded by 1
    assert [(b.data[0].shape, b.pad) for b in it] == [((2, 1), 0), ((2, 1), 1)]


def test_lenient_text_as_mxnet(csv):
    # each accepted by MXNet 1.9.1 with these values (measured)
    for text in ("1,2,3,\n4,5,6\n", "1,2,3\n\n4,5,6\n", " 1, 2 ,3\n4,5,6\n",
                 "1,2,3\r\n4,5,6\r\n", "1,2,3\n4,5,6", "1,2,3\n\n4,5,6,\n\n"):
        it = mx.io.CSVIter(data_csv=csv(text), data_shape=(3,), batch_size=2)
        assert next(it).data[0].asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]], repr(text)
    # a line of spaces is blank here (MXNet 1.9.1 reads it as a row of one value and fails)
    it = mx.io.CSVIter(data_csv=csv("1,2,3\n \t \n4,5,6\n"), data_shape=(3,), batch_size=2)
    assert next(it).data[0].asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    it = mx.io.CSVIter(data_csv=csv("1e3,+1,-2.5\n.5,5.,1E-2\n"), data_shape=(3,), batch_size=2)
    np.testing.assert_array_equal(next(it).data[0].asnumpy(),
                                  np.array([[1000, 1, -2.5], [0.5, 5, 0.01]], np.float32))


def test_directory_reads_files_in_name_order(tmp_path):
    d = tmp_path / "dd"
    d.mkdir()
    (d / "b.csv").write_text("1,2\n")
    (d / "a.csv").write_text("3,4\n5,6\n")
    (d / "c.txt").write_text("7,8\n")
    (d / ".hidden").write_text("x\n")
    it = mx.io.CSVIter(data_csv=str(d), data_shape=(2,), batch_size=2)
    # measured with MXNet 1.9.1 (a.csv, b.csv, c.txt)
    assert [b.data[0].asnumpy().tolist() for b in it] == [[[3, 4], [5, 6]], [[1, 2], [7, 8]]]


def test_compressed_file(tmp_path):
    p = tmp_path / "d.csv.gz"
    with gzip.open(p, "wb") as f:
        f.write(FOUR.encode())
    it = mx.io.CSVIter(data_csv=str(p), data_shape=(3,), batch_size=4)
    assert next(it).data[0].asnumpy()[:, 0].tolist() == [1, 2, 3, 4]


def test_reset_and_end_of_epoch(csv):
    it = mx.io.CSVIter(data_csv=csv("".join(f"{i}\n" for i in range(10))), data_shape=(1,),
                       batch_size=3)
    it.reset()  # before the first epoch: no effect (MXNet 1.9.1 then starts at row 2)
    assert it.next().data[0].asnumpy().ravel().tolist() == [0, 1, 2]
    it.reset()  # mid-epoch: back to row 0 (MXNet 1.9.1 continues at row 2, measured)
    assert it.next().data[0].asnumpy().ravel().tolist() == [0, 1, 2]
    assert [b.data[0].asnumpy().ravel().tolist() for b in it] == [[3, 4, 5], [6, 7, 8],
                                                                    [9, 0, 1]]
    assert not it.iter_next() and not it.iter_next()  # measured: False, False
    with pytest.raises(StopIteration):
        it.next()
    with pytest.raises(mx.MXNetError, match="no current batch"):
        it.getdata()
    it.reset()
    assert it.iter_next() and it.getpad() == 0 and list(it.getindex()) == [0, 1, 2]
    assert it.getlabel()[0].asnumpy().tolist() == [0, 0, 0]


def test_names_and_batch_size(csv):
    it = mx.io.CSVIter(data_csv=csv(FOUR), data_shape=(3,), batch_size=2, data_name="x",
                       label_name="y")
    # measured with MXNet 1.9.1
    assert [d.name for d in it.provide_data + it.provide_label] == ["x", "y"]
    assert it.batch_size == 2


def test_matches_numpy_on_random_floats(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((500, 7)).astype(np.float32)
    p = tmp_path / "r.csv"
    np.savetxt(p, x, delimiter=",", fmt="%.9g")
    it = mx.io.CSVIter(data_csv=str(p), data_shape=(7,), batch_size=100)
    got = np.concatenate([b.data[0].asnumpy() for b in it])
    np.testing.assert_array_equal(got, x)  # %.9g round-trips float32 exactly


def test_allow_nonfinite(csv):
    it = mx.io.CSVIter(data_csv=csv("nan,inf,-inf\n1,Infinity,2\n"), data_shape=(3,),
                       batch_size=2, allow_nonfinite=True)
    got = next(it).data[0].asnumpy()
    assert np.isnan(got[0, 0]) and got[0, 1] == np.inf and got[0, 2] == -np.inf
    assert got[1].tolist() == [1, np.inf, 2]
    with pytest.raises(mx.io.CSVFormatError, match=r":1:1: value '1e400' is out of float32"):
        mx.io.CSVIter(data_csv=csv("1e400,1,1\n"), data_shape=(3,), allow_nonfinite=True)


# MXNet 1.9.1 (measured): 'abc', '', header, ';'/tab/space separators, '#', quotes and a
# short/long row raise "The data size in CSV do not match size of shape" without a location;
# '0x10' reads as 0, '1e40' as 1e38, int32 '1.5' as 1, '1e3' as 1, 99999999999 wraps, all
# silently; nan/inf are accepted; a longer label file is silently cut.
BAD = [
    ("1,2,3\n4,abc,6\n", {}, r"d\.csv:2:3: invalid number 'abc'", (2, 3, "abc")),
    ("1,,3\n", {}, r"d\.csv:1:3: empty field", (1, 3, "")),
    ("a,b,c\n1,2,3\n", {}, r":1:1: invalid number 'a' .*header line", (1, 1, "a")),
    ("1;2;3\n", {}, r":1:1: invalid number '1;2;3'.*separated by commas", (1, 1, "1;2;3")),
    ("1\t2\t3\n", {}, r"invalid number '1\\x092\\x093'.*separated by commas",
     (1, 1, "1\\x092\\x093")),
    ("#c\n1,2,3\n", {}, r":1:1: invalid number '#c'", (1, 1, "#c")),
    ('"1",2,3\n', {}, r":1:1: invalid number '\"1\"'", (1, 1, '"1"')),
    ("0x10,2,3\n", {}, r":1:1: invalid number '0x10'", (1, 1, "0x10")),
    ("1_0,2,3\n", {}, r":1:1: invalid number '1_0'", (1, 1, "1_0")),
    ("1,2,3\n4,5\n", {}, r":2:4: expected 3 values per row \(data_shape \(3,\)\), found 2",
     (2, 4, "")),
    ("1,2,3\n4,5,6,7\n", {}, r":2:7: expected 3 values per row .*found 4", (2, 7, "7")),
    ("1,2,3,,\n", {}, r":1:7: expected 3 values per row .*found 5", (1, 7, "")),
    ("1e40,2,3\n", {}, r":1:1: value '1e40' is out of float32 range", (1, 1, "1e40")),
    ("1,nan,3\n", {}, r":1:3: non-finite value 'nan' \(pass allow_nonfinite=True",
     (1, 3, "nan")),
    ("1,2,-inf\n", {}, r":1:5: non-finite value '-inf'", (1, 5, "-inf")),
    ("1.5,2,3\n", {"dtype": "int32"}, r":1:1: invalid integer '1.5' \(dtype int32", (1, 1, "1.5")),
    ("1e3,2,3\n", {"dtype": "int64"}, r":1:1: invalid integer '1e3'", (1, 1, "1e3")),
    ("99999999999,2,3\n", {"dtype": "int32"},
     r":1:1: value '99999999999' is out of int32 range \[-2147483648, 2147483647\]",
     (1, 1, "99999999999")),
    ("99999999999999999999,2,3\n", {"dtype": "int64"}, r"out of int64 range",
     (1, 1, "99999999999999999999")),
    ("1,2,3\n4,5,\xe9\n", {}, r":2:5: invalid number '\\xc3\\xa9'", (2, 5, "\\xc3\\xa9")),
]


@pytest.mark.parametrize("text,kw,match,where", BAD, ids=[repr(b[0]) for b in BAD])
def test_malformed_input_names_path_line_column(csv, text, kw, match, where):
    path = csv(text)
    with pytest.raises(mx.io.CSVFormatError, match=match) as info:
        mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=1, **kw)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, mx.MXNetError)
    assert (err.line, err.column, err.token) == where and err.path == path
    assert str(err).startswith(f"{path}:{where[0]}:{where[1]}: ")


def test_error_in_a_late_chunk_names_its_line(csv, monkeypatch):
    from sparsenet.io import csv_format
    monkeypatch.setattr(csv_format, "_LINES_PER_CHUNK", 4)
    lines = ["1,2,3,"] * 9 + ["1,x,3"]  # trailing commas: the line reader
    with pytest.raises(mx.io.CSVFormatError, match=r":10:3: invalid number 'x'"):
        read_csv(csv("\n".join(lines)), 3, "float32")


def test_the_first_problem_is_reported(csv):
    with pytest.raises(mx.io.CSVFormatError, match=r":2:3: invalid number 'x'"):
        mx.io.CSVIter(data_csv=csv("1,2,3\n4,x,6,\n7,8\n"), data_shape=(3,))


def test_label_file_row_count_must_match(csv):
    data = csv("1,2,3\n4,5,6\n")
    # MXNet 1.9.1: a shorter label file fails ("Data CSV's row is smaller than the number of
    # rows in label_csv", backwards); a longer one is silently cut (measured)
    for labels, n in (("1\n", 1), ("1\n2\n3\n4\n", 4), ("", 0)):
        with pytest.raises(mx.io.CSVFormatError,
                           match=rf"label_csv '.*l\.csv' has {n} rows but data_csv '.*d\.csv' "
                                 rf"has 2"):
            mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=csv(labels, "l.csv"))
    with pytest.raises(mx.io.CSVFormatError,
                       match=r"l\.csv:1:3: expected 1 value per row \(label_shape \(1,\)\), "
                             r"found 2"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=csv("0,1\n2,3\n", "l.csv"))


def test_bad_arguments(csv, tmp_path):
    data = csv(FOUR)
    with pytest.raises(mx.io.CSVFormatError, match="holds no rows"):
        mx.io.CSVIter(data_csv=csv("\n\n", "e.csv"), data_shape=(3,))
    with pytest.raises(FileNotFoundError, match="data_csv"):
        mx.io.CSVIter(data_csv=str(tmp_path / "missing.csv"), data_shape=(3,))
    # measured with MXNet 1.9.1: float16/uint8 "not supported for CSVIter" (float64 too)
    for dtype in ("float16", "uint8", "bogus"):
        with pytest.raises(mx.base.InvalidArgumentError, match="dtype must be one of"):
            mx.io.CSVIter(data_csv=data, data_shape=(3,), dtype=dtype)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch_size must be a positive integer"):
            mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=bad)
    for shape in ((), (0,), "x", (3, -1)):
        with pytest.raises(ValueError, match="data_shape must be"):
            mx.io.CSVIter(data_csv=data, data_shape=shape)
    with pytest.raises(ValueError, match="prefetch_buffer"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), prefetch_buffer=-1)
    it = mx.io.CSVIter(data_csv=data, data_shape=3, label_csv="NULL", batch_size=4)
    assert next(it).data[0].shape == (4, 3)


def test_module_trains_on_csv_batches(csv):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32)).astype(np.float32)
    data = csv("\n".join(",".join(f"{v:.9g}" for v in row) for row in x))
    labels = csv("\n".join(f"{v:.9g}" for v in y), "l.csv")
    it = mx.io.CSVIter(data_csv=data, data_shape=(4,), label_csv=labels, batch_size=8,
                       label_name="lin_label")
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1, no_bias=True, name="fc"),
        name="lin")
    mod = mx.mod.Module(net, label_names=["lin_label"])
    mod.fit(it, num_epoch=30, optimizer="sgd", optimizer_params={"learning_rate": 0.1},
            initializer=mx.init.Zero(), eval_metric="mse")
    w = mod.get_params()[0]["fc_weight"].asnumpy().ravel()
    np.testing.assert_allclose(w, [1.0, -2.0, 0.5, 3.0], atol=1e-2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("allow_nonfinite", [False, True])
def test_fast_reader_accepts_only_what_the_line_reader_accepts(dtype, allow_nonfinite):
    """NumPy's C reader serves clean files; it must never accept a file the validating line
    reader rejects, nor read other values."""
    import random

    from sparsenet.io.csv_format import CSVFormatError, _Reader
    rng = random.Random(7)
    pieces = list("0123456789+-.eE ") + ["nan", "inf", "Infinity", "1", "2.5", "1e3", "1e40"]
    reader = _Reader("x.csv", 2, np.dtype(dtype).type, allow_nonfinite, "width 2")
    for _ in range(400):
        rows = [",".join("".join(rng.choice(pieces) for _ in range(rng.randint(1, 3)))
                         for _ in range(2)) for _ in range(rng.randint(1, 3))]
        buf = ("\n".join(rows) + "\n").encode()
        fast = reader._fast(buf)
        if fast is None:
            continue
        try:
            slow = reader._by_lines(buf)
        except CSVFormatError as e:
            pytest.fail(f"fast reader accepted {buf!r}, line reader says {e}")
        assert fast.dtype == slow.dtype and np.array_equal(fast, slow, equal_nan=True), buf


def test_ctx_places_batches(csv):
    it = mx.io.CSVIter(data_csv=csv(FOUR), data_shape=(3,), batch_size=3, ctx=mx.cpu(1))
    b = it.next()
    assert b.data[0].context == mx.cpu(1) and b.label[0].context == mx.cpu(1)


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_gpu_batches(csv):
    it = mx.io.CSVIter(data_csv=csv(FOUR), data_shape=(3,), batch_size=3, ctx=mx.gpu(0),
                       label_csv=csv("0\n1\n2\n3\n", "l.csv"))
    batches = list(it)
    assert all(b.data[0].context == mx.gpu(0) and b.label[0].context == mx.gpu(0)
               for b in batches)
    assert batches[1].data[0].asnumpy()[:, 0].tolist() == [4, 1, 2]
    assert batches[1].label[0].asnumpy().tolist() == [3, 0, 1]
