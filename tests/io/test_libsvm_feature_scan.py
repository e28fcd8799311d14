"""The native kernel's feature scanner (feature_scan.h) reads the lines it takes exactly as
the general loop and the pure-Python reference kernel do, and hands every other line back.

The scanner only runs on a line whose features start at least 80 bytes before the end of
the parsed text, so every text here ends with a long comment line: each line under test is
then within its reach. Lines mix what it takes (plain decimal tokens, comments, indices in
any order the options allow) with what it must hand back mid-line (exponents, nan,
out-of-range indices, orders the options forbid, long digit runs, bad tokens), at any
position in a line and across the 64-byte blocks it classifies.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsenet.io.libsvm import kernel as libsvm_kernel
from sparsenet.io.libsvm.errors import KernelError
from sparsenet.io.libsvm.options import ParseOptions

from .test_libsvm_kernel import same

native = pytest.mark.skipif(not libsvm_kernel.native_available(),
                            reason="the native LibSVM kernel is not built")

PAD = b"# " + b"p" * 100 + b"\n"  # a comment line: keeps every line above in the scanner's reach

OPTIONS = [
    ParseOptions(), ParseOptions(num_features=1000), ParseOptions(zero_based=False),
    ParseOptions(zero_based=False, num_features=50), ParseOptions(dtype="float64"),
    ParseOptions(duplicates="sum"), ParseOptions(strict_order=True),
    ParseOptions(query_id=True), ParseOptions(allow_nonfinite=True, dtype="float64"),
    ParseOptions(weights=True), ParseOptions(multilabel=True),
]

digits = st.text("0123456789", min_size=0, max_size=20)
value = st.builds(lambda sign, a, dot, b, exp: sign + a + dot + b + exp,
                  st.sampled_from(["", "", "", "-", "+"]), digits.map(lambda d: d[:12]),
                  st.sampled_from([".", ".", ""]), digits,
                  st.sampled_from([""] * 8 + ["e5", "E-3", "e"]))
odd_value = st.sampled_from(["nan", "inf", "-Infinity", "1e400", "0x10", "1.2.3", "", "-", "."])
index = st.one_of(st.integers(0, 2000).map(str),
                  st.integers(0, 10 ** 19).map(str),
                  st.builds(lambda z, i: "0" * z + str(i), st.integers(1, 20), st.integers(0, 99)))
token = st.one_of(
    st.builds(lambda i, v: f"{i}:{v}", index, value),
    st.builds(lambda i, v: f"{i}:{v}", index, odd_value),
    st.sampled_from(["#c", "x", "-3:1", ":1", "3", "qid:2", "3:1:2", "1,2"]),
)
space = st.sampled_from([" ", " ", " ", "  ", "\t", " \t "])


@st.composite
def lines(draw, sorted_only):
    """Lines of tokens; with ``sorted_only``, mostly well-formed lines with increasing
    indices (the scanner's whole-line case), else anything."""
    out = []
    for _ in range(draw(st.integers(1, 5))):
        label = draw(st.sampled_from(["1", "-1", "0.5", "0", "2,3", "1:0.5"]))
        qid = draw(st.sampled_from(["", "", " qid:7"]))
        if sorted_only:
            idx = sorted(set(draw(st.lists(st.integers(0, 10 ** 6), max_size=30))))
            toks = [f"{i}:{draw(value)}" for i in idx]
        else:
            toks = draw(st.lists(token, max_size=30))
        body = "".join(draw(space) + t for t in toks)
        out.append(label + qid + body + draw(st.sampled_from(["", "", " ", "\r", " # end"])))
    return "\n".join(out) + "\n"


def _check(text, opts):
    buf = text.encode("latin-1") + PAD
    a = libsvm_kernel.parse(buf, opts, backend="native")
    b = libsvm_kernel.parse(buf, opts, backend="python")
    assert same(a, b), (text, a, b)


@native
@settings(max_examples=400, deadline=None)
@given(lines(sorted_only=True), st.sampled_from(OPTIONS))
def test_scanner_agrees_on_well_formed_lines(text, opts):
    _check(text, opts)


@native
@settings(max_examples=400, deadline=None)
@given(lines(sorted_only=False), st.sampled_from(OPTIONS))
def test_scanner_agrees_on_any_tokens(text, opts):
    _check(text, opts)


@native
@settings(max_examples=400, deadline=None)
@given(lines(sorted_only=True), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(
    list(b"0123456789:.-+ \t\n#ex\r\x00\xffq")), st.sampled_from(["set", "del", "ins"])),
    min_size=1, max_size=5), st.sampled_from(OPTIONS))
def test_scanner_agrees_on_damaged_lines(text, edits, opts):
    """Well-formed lines with a few bytes replaced, removed or inserted anywhere (inside
    digit runs, at separators, in the padding of a block)."""
    buf = bytearray(text.encode("latin-1"))
    for where, byte, how in edits:
        i = min(int(where * len(buf)), len(buf) - 1)
        if how == "set":
            buf[i] = byte
        elif how == "del" and len(buf) > 1:
            del buf[i]
        else:
            buf.insert(i, byte)
    _check(buf.decode("latin-1"), opts)


@native
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scanner_values_match_python_float(dtype):
    """Every value form the scanner converts (1-19 digits, any point position, signs,
    leading zeros, runs up to 16 digits on each side) against float() and numpy's cast."""
    rng = np.random.default_rng(11)
    texts, rows = [], []
    for r in range(3000):
        n = int(rng.integers(1, 25))
        idx = np.unique(rng.integers(0, 10 ** int(rng.integers(1, 17)), n))
        vals = []
        for _ in idx:
            nint, nfrac = int(rng.integers(0, 17)), int(rng.integers(0, 17))
            s = "".join(rng.choice(list("0123456789"), nint)) + "." + \
                "".join(rng.choice(list("0123456789"), nfrac))
            s = s.rstrip(".") if rng.random() < 0.2 else s
            s = ("-" if rng.random() < 0.3 else "+" if rng.random() < 0.05 else "") + s
            vals.append(s if s.strip("+-.") else "0")
        texts.append(f"{r % 2} " + " ".join(f"{i}:{v}" for i, v in zip(idx, vals)))
        rows.append((idx, vals))
    got = libsvm_kernel.parse(("\n".join(texts) + "\n").encode() + PAD,
                              ParseOptions(dtype=dtype, max_num_features=10 ** 17),
                              backend="native")
    want_idx = np.concatenate([i for i, _ in rows])
    want_val = np.array([float(v) for _, vs in rows for v in vs]).astype(dtype)
    assert not isinstance(got, KernelError), got
    assert np.array_equal(got.indices, want_idx)
    assert np.array_equal(got.values.view(np.uint8), want_val.view(np.uint8))  # bit for bit
    assert got.indptr.tolist() == np.cumsum([0] + [len(i) for i, _ in rows]).tolist()
    assert got.max_index == int(want_idx.max())


@native
def test_scanner_hands_back_a_line_midway():
    """A line the scanner starts and must give up on late (the 30th token has an exponent,
    is out of order, repeats, or is out of range) is read whole by the general loop: no
    feature is kept twice, and its error or sum is the general loop's."""
    head = " ".join(f"{i}:{i}.5" for i in range(1, 30))
    ok = ParseOptions(num_features=40, duplicates="sum")
    for tail, want in [("30:1e1", 10.0), ("31:-2.25", -2.25)]:
        out = libsvm_kernel.parse(f"1 {head} {tail}\n".encode() + PAD, ok, backend="native")
        assert out.indices.tolist() == list(range(1, 30)) + [int(tail.split(":")[0])]
        assert out.values[-1] == want and out.values[:29].tolist() == [i + 0.5 for i in
                                                                         range(1, 30)]
    out = libsvm_kernel.parse(f"1 {head} 29:1\n".encode() + PAD, ok, backend="native")
    assert out.indices.tolist() == list(range(1, 30)) and out.values[-1] == 30.5
    out = libsvm_kernel.parse(f"1 {head} 3:1\n".encode() + PAD, ok, backend="native")
    assert out.indices.tolist() == list(range(1, 30)) and out.values[2] == 4.5
    for tail, strict in [("40:1", ParseOptions(num_features=40)),
                         ("3:1", ParseOptions(strict_order=True)), ("29:1", ParseOptions())]:
        text = f"1 {head} {tail}\n".encode() + PAD
        got = libsvm_kernel.parse(text, strict, backend="native")
        assert got == libsvm_kernel.parse(text, strict, backend="python")
        assert type(got).__name__ == "KernelError"


@native
def test_scanner_stops_at_comments_and_keeps_order_rules():
    """A comment ends the features wherever it starts, even right after a value and
    looking like tokens; indices out of order or repeated are sorted or summed as the
    options say (hand-computed rows)."""
    head = " ".join(f"{i}:1" for i in range(1, 20))
    text = (f"1 {head} 30:2#40:5 50:6\n"
            f"1 {head} 30:2 #40:5\n"
            f"1 {head} 30:2.5e0# 40:5\n"
            f"1 {head} 25:3 21:4 25:1\n").encode() + PAD
    got = libsvm_kernel.parse(text, ParseOptions(duplicates="sum"), backend="native")
    first = list(range(1, 20))
    assert got.indices.tolist() == (first + [30]) * 3 + first + [21, 25]
    assert got.values.tolist() == ([1.0] * 19 + [2.0]) * 2 + [1.0] * 19 + [2.5] + \
        [1.0] * 19 + [4.0, 4.0]
    assert same(got, libsvm_kernel.parse(text, ParseOptions(duplicates="sum"), backend="python"))


@native
def test_chunk_read_by_the_general_loop_after_many_lines_come_back():
    """After enough handed-back lines (every value with an exponent) parse_region stops
    trying the scanner for the rest of the chunk; the rows are the same either way."""
    odd = "".join(f"1 {i}:1e-1 {i + 1}:2.5E1\n" for i in range(60))
    plain = "".join(f"0 {i}:0.5 {i + 3}:-1.25 {i + 7}:3\n" for i in range(60))
    for text in (odd + plain, plain + odd + plain):
        buf = text.encode() + PAD
        got = libsvm_kernel.parse(buf, ParseOptions(), backend="native")
        assert same(got, libsvm_kernel.parse(buf, ParseOptions(), backend="python"))
        assert got.nrows == text.count("\n")
    got = libsvm_kernel.parse((odd + plain).encode() + PAD, ParseOptions(), backend="native")
    assert got.values[:4].tolist() == [np.float32(0.1), 25.0, np.float32(0.1), 25.0]
    assert got.values[-3:].tolist() == [0.5, -1.25, 3.0]
