"""The two parsing kernels agree on every input, and the number parser matches float()."""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsenet.io.libsvm import kernel as libsvm_kernel
from sparsenet.io.libsvm.errors import KernelError
from sparsenet.io.libsvm.options import ParseOptions

native = pytest.mark.skipif(not libsvm_kernel.native_available(),
                            reason="the native LibSVM kernel is not built")

CASES = [
    b"1 0:1 2:2\n0 1:3\n", b"1 3:abc\n", b"1 3:\n", b"1 :4\n", b"1 3 4\n", b"1 1.5:2\n",
    b"1 -1:2\n", b"1 a:1\n", b"1 7:2\n", b"1 99999999999999999999999:1\n",
    b"1 0000000000000000000000003:1\n", b"1 3:1 1:2\n", b"1 2:1 2:5\n", b"1 1:nan\n",
    b"1 1:inf 2:-Infinity 3:NaN\n", b"1 1:1e400\n", b"1:1 2:2\n", b"abc 1:1\n", b"nan 1:1\n",
    b"\n\n1 1:1\r\n\t0\t2:2   \n", b"# c\n1 1:1 # t\n", b"1 qid:3 1:1\n", b"1 qid:x 1:1\n",
    b"1,3 1:1\n", b"3,1 2:1\n", b"1,1 2:1\n", b"1,-2 2:1\n", b"1.5 2:1\n", b"1 0:1\n", b"1 3:1.",
    b"\x00\xff\xfe\n", b"1 3:0x10\n", b"1 4:1 3:1 4:2\n", b"1 1:1 qid:3\n",
    b"+1 1:+.5 2:-0 3:5.\n", b"1 1:3e38 2:3.5e38\n", b"-1 3:1e-50\n", b"1 2:1e308 2:1e308\n",
    b"1 2:3e38 2:3e38\n", b"   \n  # only\n", b"", b"1", b"1 2:3", b"1 2:3e", b"1 2:3#x\n",
    b"2:1\n", b"qid:2 1:1\n", b"1 9223372036854775807:1\n", b"1 1:1 1:1 0:2 0:3\n",
    b"1 " + b" ".join(b"%d:%d" % (i, i) for i in range(40, 0, -1)) + b"\n",
    b"1 " + b" ".join(b"%d:%d" % (i % 7, i) for i in range(40)) + b"\n",
    b"1 qid:99999999999999999999 1:1\n", b"1 1:0.30000000000000004 2:1.7976931348623157e308\n",
    b"1 1:4.9e-324 2:2.2250738585072011e-308 3:123456789012345678901234567890\n",
    # label:weight (weights=True)
    b"1:0.5 0:1\n0 1:2\n", b"1:x 0:1\n", b"1:-1 0:1\n", b"1:nan 0:1\n", b"-2:1e39 0:1\n",
    b":1 0:1\n", b"1:2:3 0:1\n", b"1: 0:1\n", b"1:-0 0:1\n", b"1:+.5 qid:2 0:1\n",
    b"nan:1 0:1\n", b"1e39:1 0:1\n", b"1:3e38 0:1\n1:3.5e38 0:1\n",
]

OPTIONS = [
    ParseOptions(), ParseOptions(num_features=5), ParseOptions(zero_based=False, num_features=5),
    ParseOptions(duplicates="sum"), ParseOptions(strict_order=True),
    ParseOptions(strict_order=True, duplicates="sum"),
    ParseOptions(allow_nonfinite=True, dtype="float64"), ParseOptions(dtype="float64"),
    ParseOptions(multilabel=True, query_id=True), ParseOptions(multilabel=True, num_labels=3),
    ParseOptions(max_num_features=10, query_id=True), ParseOptions(weights=True),
    ParseOptions(weights=True, allow_nonfinite=True, dtype="float64", query_id=True),
]


def same(a, b):
    if isinstance(a, KernelError) or isinstance(b, KernelError):
        return a == b
    for x, y in zip(a[:7] + a[11:], b[:7] + b[11:]):  # the arrays (weights last)
        if (x is None) != (y is None):
            return False
        if x is not None and (x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=True)):
            return False
        if x is not None and x.dtype.kind == "f":  # signed zeros agree too
            if not np.array_equal(np.signbit(x), np.signbit(y)):
                return False
    return tuple(a[7:11]) == tuple(b[7:11])


@native
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: repr(o)[13:60])
def test_kernels_agree_on_cases(opts):
    for text in CASES:
        a = libsvm_kernel.parse(text, opts, backend="native")
        b = libsvm_kernel.parse(text, opts, backend="python")
        assert same(a, b), (text, a, b)


def test_reference_kernel_hand_computed():
    out = libsvm_kernel.parse(b"1 4:1 0:2\n\n-1 qid:7 2:0.5 # c\n3", ParseOptions(query_id=True),
                              backend="python")
    assert out.indptr.tolist() == [0, 2, 3, 3]
    assert out.indices.tolist() == [0, 4, 2]
    assert out.values.tolist() == [2.0, 1.0, 0.5]
    assert out.labels.tolist() == [1.0, -1.0, 3.0]
    assert out.qids.tolist() == [0, 7, 0]
    assert (out.nrows, out.max_index, out.nlines) == (3, 4, 3)


token = st.one_of(
    st.from_regex(r"\A[0-9]{1,4}:-?[0-9]{0,3}\.?[0-9]{0,3}(e-?[0-9]{1,2})?\Z"),
    st.sampled_from(["1:nan", "2:inf", "3:", ":4", "x", "5:1:2", "qid:3", "-1:2", "0:0",
                     "7:1e400", "1,2", "3:0x1", "\x00", "#", "4:.5", "4:5."]),
)
line = st.lists(token, max_size=6).map(" ".join)


@native
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1", "-1", "0.5", "nan", "2,3", "", "1:1", "1:x",
                                            "0:-1", "2:.5"]), line),
                max_size=6),
       st.sampled_from(OPTIONS), st.booleans())
def test_kernels_agree_on_random_text(lines, opts, final_newline):
    text = "\n".join(f"{lab} {rest}" for lab, rest in lines) + ("\n" if final_newline else "")
    buf = text.encode("latin-1")
    assert same(libsvm_kernel.parse(buf, opts, backend="native"),
                libsvm_kernel.parse(buf, opts, backend="python"))


def _strings(seed, n=4000):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        nd = rng.randint(1, 25)
        d = "".join(rng.choice("0123456789") for _ in range(nd))
        pt = rng.randint(0, nd)
        s = d[:pt] + "." + d[pt:] if rng.random() < 0.8 else d
        if rng.random() < 0.5:
            s += "e" + str(rng.randint(-340, 320))
        out.append(("-" if rng.random() < 0.3 else "") + s)
    bits = np.random.default_rng(seed).integers(0, 2 ** 63, n, dtype=np.int64).view(np.float64)
    out += [repr(float(x)) for x in bits if np.isfinite(x)]
    f32 = np.random.default_rng(seed + 1).integers(0, 2 ** 31, n, dtype=np.int64).astype(
        np.uint32).view(np.float32)
    out += [repr(float(x)) for x in f32 if np.isfinite(x)]
    out += list(f32[np.isfinite(f32)].astype(str))
    out += ["4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
            "1.7976931348623157e308", "1.7976931348623159e308", "2.2250738585072011e-308",
            "9007199254740993", "18446744073709551616", "0.1", "1e23", "-0", ".5", "5.", "+1"]
    return out


@native
@pytest.mark.parametrize("seed", [0, 1])
def test_native_number_parser_matches_float(seed):
    """Correct rounding on random digits, repr of random doubles/floats, edge cases."""
    strs = _strings(seed)
    got = np.frombuffer(libsvm_kernel._native.parse_doubles("\n".join(strs).encode()),
                        dtype=np.float64)
    want = np.array([float(s) for s in strs])
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@native
def test_native_halfway_cases_round_to_even():
    from decimal import Decimal, getcontext
    getcontext().prec = 800
    rng = np.random.default_rng(3)
    xs = np.abs(rng.integers(1, 2 ** 62, 3000, dtype=np.int64).view(np.float64))
    strs = []
    for x in xs:
        x = float(x)
        if not (0 < x < 1e300):
            continue
        mid = (Decimal(x) + Decimal(float(np.nextafter(x, np.inf)))) / 2
        eps = Decimal(10) ** (mid.adjusted() - 40)
        strs += [format(m.normalize(), "e") for m in (mid, mid + eps, mid - eps)]
    got = np.frombuffer(libsvm_kernel._native.parse_doubles("\n".join(strs).encode()),
                        dtype=np.float64)
    assert np.array_equal(got, np.array([float(s) for s in strs]))


@native
def test_float32_shortest_repr_round_trips_through_double():
    """The writer's float32 text, read as double then cast, gives the same float32."""
    f = np.random.default_rng(5).integers(0, 2 ** 32, 200000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    f = f[np.isfinite(f)]
    text = "\n".join(f.astype(str)).encode()
    back = np.frombuffer(libsvm_kernel._native.parse_doubles(text), np.float64).astype(np.float32)
    assert np.array_equal(back.view(np.uint32), f.view(np.uint32))


def test_count_rows(backend):
    text = b"1 0:1\n\n   \n# c\n  # c2\n0\n1 2:2"
    assert libsvm_kernel.count_rows(text, backend=backend) == 3


def test_pow5_table_entries():
    t = np.frombuffer(libsvm_kernel.pow5_table(), dtype=np.uint64).reshape(-1, 2)
    assert t.shape == (651, 2)
    # 5**1 normalised to 128 bits: 0b101 << 125
    assert (int(t[343, 0]) << 64 | int(t[343, 1])) == 5 << 125
    # 10**-1: the rounded-up 128-bit reciprocal of 5
    c = (1 << (3 + 127)) // 5 + 1
    assert (int(t[341, 0]) << 64 | int(t[341, 1])) == c
