"""Every row of the bad-input table (reliability.md §4), with its exact message, on both kernels."""
import os
import re

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.io import LibSVMFormatError, load_libsvm


def err(write, text, match, **kw):
    path = write(text)
    with pytest.raises(LibSVMFormatError, match=re.escape(match)) as e:
        load_libsvm(path, **kw)
    return e.value


# ---------------------------------------------------------------- rows 1-4: malformed tokens
@pytest.mark.parametrize("tok,val", [("3:abc", "abc"), ("3:", ""), ("3:1.5x", "1.5x"),
                                     ("3:0x10", "0x10"), ("3:1:2", "1:2"), ("3:1e", "1e"),
                                     ("3:--1", "--1"), ("3:1_0", "1_0")])
def test_invalid_value(write, backend, tok, val):
    e = err(write, f"0 1:1\n1 0:2.5 {tok} 4:1\n",
            f"data.svm:2:9: invalid feature value '{val}' in token '{tok}'")
    assert (e.line, e.column, e.token) == (2, 9, tok)
    assert e.path.endswith("data.svm") and isinstance(e, ValueError)
    assert isinstance(e, mx.base.SparsenetError)


@pytest.mark.parametrize("tok,idx", [(":4", ""), ("1.5:2", "1.5"), ("a:1", "a"), ("+3:1", "+3"),
                                     ("-:1", "-")])
def test_invalid_index(write, backend, tok, idx):
    err(write, f"1 {tok}\n", f"data.svm:1:3: invalid feature index '{idx}' in token '{tok}': "
                             f"expected a non-negative integer")


def test_token_without_colon(write, backend):
    err(write, "1 3 4\n", "data.svm:1:3: expected index:value, got token '3'")


def test_negative_index(write, backend):
    err(write, "1 -1:2\n", "data.svm:1:3: negative feature index -1 in token '-1:2'")


# ---------------------------------------------------------------- rows 5-6: index range
def test_index_out_of_range(write, backend):
    err(write, "1 0:1\n1 2:1 7:2\n", "data.svm:2:7: feature index 7 out of range [0, 5) in token "
                                     "'7:2'", num_features=5)


def test_width_inferred_without_num_features(write, backend):
    data, _ = load_libsvm(write("1 0:1\n1 2:1 7:2\n"))
    assert data.shape == (2, 8)


def test_one_based_out_of_range(write, backend):
    err(write, "1 6:2\n", "feature index 6 out of range [1, 5] (zero_based=False) in token '6:2'",
        num_features=5, zero_based=False)
    data, _ = load_libsvm(write("1 5:2\n"), num_features=5, zero_based=False)
    assert data.asnumpy().tolist() == [[0, 0, 0, 0, 2]]


def test_index_too_large(write, backend):
    big = "99999999999999999999"
    err(write, f"1 {big}:1\n", f"data.svm:1:3: feature index {big} too large in token '{big}:1': "
                               f"the limit is 1099511627775; pass num_features, or raise "
                               f"max_num_features if the file really is that wide")
    err(write, "1 100:1\n", "feature index 100 too large in token '100:1': the limit is 99",
        max_num_features=100)
    err(write, f"1 {big}:1\n", f"feature index {big} out of range [0, 5)", num_features=5)


def test_index_at_int64_limit_with_explicit_cap(write, backend):
    data, _ = load_libsvm(write("1 9223372036854775806:1\n"), max_num_features=2 ** 63 - 1)
    assert data.shape == (1, 2 ** 63 - 1)


# ---------------------------------------------------------------- rows 7-8: order and duplicates
def test_unsorted_is_sorted_by_default(write, backend):
    data, _ = load_libsvm(write("1 3:1 1:2 2:3\n"))
    assert data.indices.asnumpy().tolist() == [1, 2, 3]
    assert data.data.asnumpy().tolist() == [2, 3, 1]
    data.check_format()


def test_unsorted_strict(write, backend):
    err(write, "1 3:1 1:2\n", "data.svm:1:7: feature index 1 comes after 3 in token '1:2': "
                              "indices must increase within a line (strict_order=True)",
        strict_order=True)


def test_duplicate_is_an_error(write, backend):
    err(write, "1 2:1 2:5\n", "data.svm:1:7: duplicate feature index 2 in token '2:5' (pass "
                              "duplicates='sum' to add the values of repeated indices)")
    # found after sorting an unsorted line too, pointing at the second occurrence
    err(write, "1 4:1 3:1 4:2\n", "data.svm:1:11: duplicate feature index 4 in token '4:2'")


def test_duplicates_sum_like_scipy(write, backend):
    import scipy.sparse as sp
    data, _ = load_libsvm(write("1 2:1 2:5 0:1 2:0.5\n"), duplicates="sum")
    ref = sp.csr_matrix(([1, 5, 1, 0.5], ([0, 0, 0, 0], [2, 2, 0, 2])), shape=(1, 3))
    ref.sum_duplicates()
    assert data.indices.asnumpy().tolist() == ref.indices.tolist()
    assert data.data.asnumpy().tolist() == ref.data.tolist() == [1.0, 6.5]


def test_duplicate_sum_overflow(write, backend):
    err(write, "1 2:3e38 2:3e38\n", "the sum of the values of repeated feature index 2 overflows "
                                    "float32 in token '2:3e38'", duplicates="sum")


# ---------------------------------------------------------------- rows 9-11: non-finite, labels
def test_nonfinite_value(write, backend):
    err(write, "1 1:nan\n", "data.svm:1:3: non-finite feature value 'nan' in token '1:nan' (pass "
                            "allow_nonfinite=True to accept NaN and infinity)")
    err(write, "1 1:1 2:-Infinity\n", "non-finite feature value '-Infinity' in token '2:-Infinity'")


def test_nonfinite_allowed_parses_exactly(write, backend):
    data, label = load_libsvm(write("inf 1:nan 2:inf 3:-inf 4:2\n"), allow_nonfinite=True)
    v = data.data.asnumpy()
    assert np.isnan(v[0]) and v[1] == np.inf and v[2] == -np.inf and v[3] == 2
    assert label.asnumpy().tolist() == [np.inf]


def test_nonfinite_label(write, backend):
    err(write, "nan 1:1\n", "data.svm:1:1: non-finite label 'nan' (pass allow_nonfinite=True")


def test_value_out_of_float32_range(write, backend):
    err(write, "1 3:1e400\n", "feature value '1e400' is out of float32 range in token '3:1e400'")
    err(write, "1 3:3.5e38\n", "feature value '3.5e38' is out of float32 range")
    err(write, "1 3:1e400\n", "feature value '1e400' is out of float64 range", dtype="float64")
    err(write, "1e39 3:1\n", "label '1e39' is out of float32 range")
    data, _ = load_libsvm(write("1 3:3.5e38 4:1e-50\n"), dtype="float64")
    assert data.data.asnumpy().tolist() == [3.5e38, 1e-50]
    data, _ = load_libsvm(write("1 3:1e-50\n"))
    assert data.data.asnumpy().tolist() == [0.0]  # underflow to 0 is allowed


@pytest.mark.parametrize("line,msg", [
    ("1:1 2:2", "data.svm:1:1: invalid label '1:1': a line must start with its label (is the "
                "label missing? a 'label:weight' token needs weights=True)"),
    ("abc 1:1", "data.svm:1:1: invalid label 'abc': expected a number such as 1, -1 or 0.5"),
    ("  x1 1:1", "data.svm:1:3: invalid label 'x1'"),
])
def test_invalid_label(write, backend, line, msg):
    err(write, line + "\n", msg)


# ---------------------------------------------------------------- rows 12-16: accepted formats
def test_blank_lines_crlf_tabs_no_final_newline(write, backend):
    text = "\n\n1 0:1\r\n   \n\t0\t2:2   \r\n\n1 1:3"
    data, label = load_libsvm(write(text))
    assert data.asnumpy().tolist() == [[1, 0, 0], [0, 0, 2], [0, 3, 0]]
    assert label.asnumpy().tolist() == [1, 0, 1]
    # line numbers count physical lines, blank ones included
    err(write, text + "\n\n1 5:x\n", "data.svm:9:3: invalid feature value 'x'")


def test_comments(write, backend):
    data, label = load_libsvm(write("# header\n1 0:1 # trailing 3:x\n  # indented\n0 1:2#x\n"))
    assert data.asnumpy().tolist() == [[1, 0], [0, 2]]
    assert label.asnumpy().tolist() == [1, 0]


def test_qid(write, backend):
    path = write("1 qid:3 0:1\n0 qid:3 1:2\n1 qid:9 2:1\n")
    data, label, qid = load_libsvm(path, query_id=True)
    assert qid.asnumpy().tolist() == [3, 3, 9] and qid.dtype == np.int64
    data2, _ = load_libsvm(path)  # ignored otherwise
    assert (data2.asnumpy() == data.asnumpy()).all()
    err(write, "1 qid:x 0:1\n", "data.svm:1:3: invalid qid 'x' in token 'qid:x': expected a "
                                "non-negative integer")
    err(write, "1 0:1 qid:3\n", "'qid:' must come right after the label, got token 'qid:3'")


def test_multilabel(write, backend):
    err(write, "1,3 0:1\n", "data.svm:1:1: invalid label '1,3': a list of labels needs "
                            "multilabel=True")
    data, label = load_libsvm(write("1,3 0:1\n0 1:1\n 2:5\n2,0 0:2\n"), multilabel=True)
    assert label.stype == "csr" and label.shape == (4, 4)
    assert label.asnumpy().tolist() == [[0, 1, 0, 1], [1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 1, 0]]
    assert data.asnumpy().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 5], [2, 0, 0]]
    err(write, "1,1.5 0:1\n", "invalid multi-label '1,1.5': '1.5' is not a non-negative integer "
                              "class id", multilabel=True)
    err(write, "1,1 0:1\n", "invalid multi-label '1,1': class 1 appears twice", multilabel=True)
    err(write, "1,x 0:1\n", "invalid multi-label '1,x': 'x' is not a number", multilabel=True)
    err(write, "1,7 0:1\n", "invalid multi-label '1,7': class 7 is out of range [0, 3) "
                            "(num_labels)", multilabel=True, num_labels=3)


def test_one_based(write, backend):
    data, _ = load_libsvm(write("1 1:1 3:3\n"), zero_based=False)
    assert data.asnumpy().tolist() == [[1, 0, 3]]
    err(write, "1 0:1\n", "data.svm:1:3: feature index 0 in a 1-based file (zero_based=False) in "
                          "token '0:1'; pass zero_based=True if the file counts features from 0",
        zero_based=False)
    with pytest.raises(TypeError, match="it is never guessed"):
        load_libsvm(write("1 1:1\n"), zero_based="auto")


# ---------------------------------------------------------------- rows 17-19: files
@pytest.mark.parametrize("text", ["", "\n", "# only comments\n\n  # x\n"])
def test_empty_file(write, backend, text):
    data, label = load_libsvm(write(text), num_features=4)
    assert data.shape == (0, 4) and label.shape == (0,)
    it = mx.io.LibSVMIter(data_libsvm=write(text), data_shape=(4,), batch_size=2)
    assert list(it) == []
    it = mx.io.LibSVMIter(data_libsvm=write(text), data_shape=(4,), batch_size=2, cache_bytes=0)
    assert list(it) == []


def test_missing_paths(tmp_path):
    missing = str(tmp_path / "nope.svm")
    with pytest.raises(FileNotFoundError, match="no such file or directory") as e:
        load_libsvm(missing)
    assert e.value.filename == missing
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    (empty / ".hidden").write_text("1 0:1\n")
    with pytest.raises(FileNotFoundError, match="the directory holds no data files"):
        mx.io.LibSVMIter(data_libsvm=str(empty), data_shape=(3,))


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(write):
    path = write("1 0:1\n")
    os.chmod(path, 0)
    with pytest.raises(PermissionError, match="not readable"):
        load_libsvm(path)


def test_binary_bytes(write, backend):
    e = err(write, b"1 0:1\n\x00\xff\xfe\n", "data.svm:2:1: unexpected byte 0x00 at byte offset 6 "
                                             "in token '\\x00\\xff\\xfe': the file holds binary")
    assert e.line == 2
    err(write, b"1 0:1 2:\xc3\xa9\n", "data.svm:1:7: unexpected byte 0xc3 at byte offset 8 in "
                                      "token '2:\\xc3\\xa9'")
    data, _ = load_libsvm(write("1 0:1 # caf\u00e9 \x00\n"))  # anything goes in comments
    assert data.shape == (1, 1)


# ---------------------------------------------------------------- rows 20, 23-24
def test_long_line_across_chunks(write, backend):
    n = 30000 if backend == "python" else 300000
    line = "1 " + " ".join(f"{i}:{i % 7 + 1}" for i in range(n)) + "\n"
    path = write("0 5:1\n" + line + "1 2:2\n")
    data, label = load_libsvm(path, chunk_size=1 << 16)
    assert data.shape == (3, n) and data.nnz == n + 2
    assert label.asnumpy().tolist() == [0, 1, 1]
    assert data[1].data.asnumpy()[:8].tolist() == [1, 2, 3, 4, 5, 6, 7, 1]


@pytest.mark.parametrize("parts,index", [(2, 2), (2, -1), (0, 0)])
def test_bad_part(write, parts, index):
    with pytest.raises(ValueError, match=re.escape(f"part_index={index} is out of range for "
                                                   f"num_parts={parts}")):
        load_libsvm(write("1 0:1\n"), num_parts=parts, part_index=index)
    with pytest.raises(ValueError, match="out of range for num_parts"):
        mx.io.LibSVMIter(data_libsvm=write("1 0:1\n"), data_shape=(2,), num_parts=parts,
                         part_index=index)


def test_truncated_token_at_eof(write, backend):
    data, _ = load_libsvm(write("1 0:1\n1 3:1."))
    assert data.data.asnumpy().tolist() == [1, 1]
    err(write, "1 0:1\n1 3:1e", "data.svm:2:3: invalid feature value '1e' in token '3:1e'")


def test_error_in_a_later_chunk_names_the_right_line(write, backend):
    lines = [f"{i % 2} {i % 13}:{i}" for i in range(3000)]
    lines[2345] = "1 3:oops"
    e = err(write, "\n".join(lines) + "\n", "data.svm:2346:3: invalid feature value 'oops'",
            chunk_size=1000)
    assert e.line == 2346
    with pytest.raises(LibSVMFormatError, match="data.svm:2346:3"):
        it = mx.io.LibSVMIter(data_libsvm=write("\n".join(lines) + "\n"), data_shape=(13,),
                              batch_size=7, chunk_size=1000, cache_bytes=0)
        for _ in it:
            pass


def test_error_in_gzip_file(write, backend):
    lines = [f"{i % 2} {i % 13}:{i}" for i in range(2000)] + ["1 3:oops"]
    path = write("\n".join(lines) + "\n", name="data.svm.gz")
    with pytest.raises(LibSVMFormatError, match=re.escape("data.svm.gz:2001:3: invalid feature "
                                                          "value 'oops'")):
        load_libsvm(path, chunk_size=1000)
