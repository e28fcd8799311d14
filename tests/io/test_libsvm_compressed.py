"""Compressed LibSVM: gzip (ISA-L), zstd, xz, bz2 round trips, errors, fallbacks, sharding."""
import bz2
import gzip
import lzma
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import scipy.sparse as sp
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsenet.io import (CompressedFileError, CompressionUnavailableError, LibSVMIter,
                          load_libsvm, save_libsvm)
from sparsenet.io.libsvm.source import SourceFile, assign_files, list_files, plan

SUFFIXES = [".gz", ".zst", ".xz", ".bz2"]
DECOMPRESS = {".gz": gzip.decompress, ".xz": lzma.decompress, ".bz2": bz2.decompress,
              ".zst": lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b)}


def _random_csr(dtype, n=300, m=50, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, m, density=0.2, format="csr", random_state=seed, dtype=np.float64)
    X.data = (rng.standard_normal(X.nnz) * 10.0 ** rng.integers(-8, 8, X.nnz)).astype(dtype)
    X.data[::17] = 0.0  # explicit zeros are written and read back
    return X, rng


def _same_csr(data, X):
    assert data.shape == X.shape
    assert data.indptr.asnumpy().tolist() == X.indptr.tolist()
    assert data.indices.asnumpy().tolist() == X.indices.tolist()
    assert data.data.asnumpy().dtype == X.data.dtype
    assert data.data.asnumpy().tobytes() == X.data.tobytes()


VARIANTS = ["float32", "float64", "qid", "multilabel", "weighted"]


def _save_variant(path, variant, compresslevel=None):
    """Write one variant; return what load_libsvm must give back and its keyword arguments."""
    X, rng = _random_csr(np.float64 if variant == "float64" else np.float32)
    n = X.shape[0]
    y = rng.integers(-3, 4, n).astype(X.data.dtype)
    kw, load_kw = {}, {"num_features": X.shape[1], "dtype": X.data.dtype.name}
    if variant == "qid":
        kw["query_id"] = np.repeat(np.arange(n // 3 + 1), 3)[:n]
        load_kw["query_id"] = True
    if variant == "weighted":
        kw["weight"] = rng.random(n).astype(np.float32)
        load_kw["weights"] = True
    if variant == "multilabel":
        y = sp.random(n, 6, density=0.3, format="csr", random_state=1, dtype=np.float32)
        y.data[:] = 1
        kw["multilabel"] = True
        load_kw.update(multilabel=True, num_labels=6)
    save_libsvm(path, X, y, compresslevel=compresslevel, **kw)
    return X, y, kw, load_kw


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_round_trip_bit_exact_and_standard_files(tmp_path, suffix, variant):
    X, y, kw, load_kw = _save_variant(str(tmp_path / ("c.svm" + suffix)), variant)
    out = load_libsvm(str(tmp_path / ("c.svm" + suffix)), **load_kw)
    _same_csr(out[0], X)
    if variant == "multilabel":
        assert (sp.csr_matrix(out[1].asnumpy()) != y).nnz == 0
    else:
        assert out[1].asnumpy().tobytes() == y.tobytes()
    if variant == "qid":
        assert out[2].asnumpy().tolist() == kw["query_id"].tolist()
    if variant == "weighted":
        assert out[2].asnumpy().tobytes() == kw["weight"].tobytes()
    # the standard decompressors read the file, and it holds the plain file's text
    _save_variant(str(tmp_path / "c.svm"), variant)
    raw = (tmp_path / ("c.svm" + suffix)).read_bytes()
    assert DECOMPRESS[suffix](raw) == (tmp_path / "c.svm").read_bytes()


@pytest.mark.parametrize("suffix,level", [(".gz", 0), (".gz", 3), (".gz", 6), (".gz", 9),
                                          (".zst", 1), (".zst", 19), (".xz", 0), (".bz2", 1)])
def test_compresslevel(tmp_path, suffix, level):
    p = str(tmp_path / ("l.svm" + suffix))
    X, _, _, load_kw = _save_variant(p, "float32", compresslevel=level)
    _same_csr(load_libsvm(p, **load_kw)[0], X)
    _save_variant(str(tmp_path / "l.svm"), "float32")
    assert DECOMPRESS[suffix](open(p, "rb").read()) == (tmp_path / "l.svm").read_bytes()


def test_gzip_level_changes_size(tmp_path):
    sizes = []
    for level in (0, 2, 9):
        p = str(tmp_path / f"s{level}.svm.gz")
        _save_variant(p, "float32", compresslevel=level)
        sizes.append(os.path.getsize(p))
    assert sizes[0] > sizes[1] > sizes[2]


@pytest.mark.parametrize("path,level,msg", [
    ("x.svm.gz", 10, r"compresslevel for gzip must be an int in \[0, 9\], got 10"),
    ("x.svm.zst", 0, r"compresslevel for zstd must be an int in \[1, 22\], got 0"),
    ("x.svm.bz2", 2.5, r"compresslevel for bz2 must be an int in \[1, 9\], got 2.5"),
    ("x.svm", 3, r"compresslevel=3 needs a compressed path \(.gz, .zst, .xz or .bz2\), got "),
])
def test_bad_compresslevel(tmp_path, path, level, msg):
    with pytest.raises(ValueError, match=msg):
        save_libsvm(str(tmp_path / path), np.eye(2), [0, 1], compresslevel=level)
    assert os.listdir(tmp_path) == []


def test_multi_frame_zst_and_multi_member_gz(tmp_path):
    a, b = b"1 0:1\n0 1:2\n", b"1 2:3\n"
    c = zstandard.ZstdCompressor()
    (tmp_path / "m.svm.zst").write_bytes(c.compress(a) + c.compress(b) + c.compress(b""))
    (tmp_path / "m.svm.gz").write_bytes(gzip.compress(a) + gzip.compress(b))
    for name in ("m.svm.zst", "m.svm.gz"):
        data, label = load_libsvm(str(tmp_path / name), num_features=3)
        assert data.asnumpy().tolist() == [[1, 0, 0], [0, 2, 0], [0, 0, 3]]
        assert label.asnumpy().tolist() == [1, 0, 1]


def test_zst_streamed_frame_without_content_size(tmp_path):
    text = b"".join(b"%d %d:%d\n" % (i % 2, i % 7, i + 1) for i in range(20000))
    with open(tmp_path / "s.svm.zst", "wb") as f:
        with zstandard.ZstdCompressor().stream_writer(f) as w:
            for i in range(0, len(text), 1000):
                w.write(text[i:i + 1000])
    data, label = load_libsvm(str(tmp_path / "s.svm.zst"), chunk_size=4096)
    assert data.shape == (20000, 7) and label.asnumpy()[:3].tolist() == [0, 1, 0]
    assert float(data.asnumpy().sum(dtype=np.float64)) == sum(range(1, 20001))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_empty_compressed_file_and_empty_archive(tmp_path, suffix):
    (tmp_path / ("e.svm" + suffix)).write_bytes(b"")
    data, _ = load_libsvm(str(tmp_path / ("e.svm" + suffix)), num_features=3)
    assert data.shape == (0, 3)
    save_libsvm(str(tmp_path / ("z.svm" + suffix)), np.zeros((0, 3)), [])
    data, _ = load_libsvm(str(tmp_path / ("z.svm" + suffix)), num_features=3)
    assert data.shape == (0, 3)


@pytest.mark.parametrize("suffix,packer", [
    (".zst", bytes), (".gz", bytes), (".xz", bytes), (".bz2", bytes),
    (".zst", lambda b: gzip.compress(b, mtime=0)),
    (".gz", lambda b: zstandard.ZstdCompressor().compress(b)),
], ids=["zst-text", "gz-text", "xz-text", "bz2-text", "zst-gzip", "gz-zstd"])
def test_content_not_matching_suffix_names_the_path(tmp_path, suffix, packer):
    p = tmp_path / ("bad.svm" + suffix)
    p.write_bytes(packer(b"1 0:1\n"))
    with pytest.raises(CompressedFileError, match=rf"bad\.svm\{suffix}: the suffix names \w+ "
                                                  r"but the file does not start like") as e:
        load_libsvm(str(p))
    assert e.value.path == str(p) and isinstance(e.value, ValueError)
    with pytest.raises(CompressedFileError, match=r"bad\.svm"):
        list(LibSVMIter(data_libsvm=str(p), data_shape=(3,), batch_size=1))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_truncated_archive_names_the_path(tmp_path, suffix):
    p = str(tmp_path / ("t.svm" + suffix))
    X, _, _, load_kw = _save_variant(p, "float32")
    raw = open(p, "rb").read()
    open(p, "wb").write(raw[:len(raw) // 2])
    with pytest.raises(CompressedFileError, match=rf"t\.svm\{suffix}: truncated or corrupt"):
        load_libsvm(p, **load_kw)


def test_corrupt_gzip_names_the_path(tmp_path):
    raw = bytearray(gzip.compress(b"1 0:1\n" * 1000))
    raw[len(raw) // 2] ^= 0xFF
    (tmp_path / "c.svm.gz").write_bytes(bytes(raw))
    with pytest.raises(CompressedFileError, match=r"c\.svm\.gz: truncated or corrupt gzip"):
        load_libsvm(str(tmp_path / "c.svm.gz"))


_HIDE = r"""
import sys, warnings
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('isal', 'zstandard', 'compression'):
            raise ImportError('hidden by the test: ' + name)
sys.meta_path.insert(0, Hide())
warnings.simplefilter('always')
import numpy as np
import sparsenet as mx
d = sys.argv[1]
with warnings.catch_warnings(record=True) as w:
    x = mx.nd.sparse.csr_matrix(np.array([[0, 1.5], [2, 0]], dtype=np.float32))
    mx.io.save_libsvm(d + '/a.svm.gz', x, mx.nd.array([1, 0]))
    data, label = mx.io.load_libsvm(d + '/a.svm.gz')
    data2, _ = mx.io.load_libsvm(d + '/a.svm.gz', num_parts=2, part_index=0)
print(data.asnumpy().tolist(), label.asnumpy().tolist())
print(len(w), w[0].category.__name__, 'isal' in str(w[0].message))
for call in (lambda: mx.io.save_libsvm(d + '/b.svm.zst', x, [1, 0]),
             lambda: mx.io.load_libsvm(d + '/c.svm.zst')):
    try:
        call()
    except mx.io.CompressionUnavailableError as e:
        print(isinstance(e, ImportError), e)
print('isal' in sys.modules, 'zstandard' in sys.modules)
"""


def test_without_isal_and_zstandard(tmp_path):
    import gzip as stdlib_gzip
    (tmp_path / "c.svm.zst").write_bytes(zstandard.ZstdCompressor().compress(b"1 0:1\n"))
    out = subprocess.run([sys.executable, "-c", _HIDE, str(tmp_path)], capture_output=True,
                         text=True, env={**os.environ, "PYTHONWARNINGS": ""})
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0] == "[[0.0, 1.5], [2.0, 0.0]] [1.0, 0.0]"
    assert lines[1] == "1 CompressionFallbackWarning True"  # one warning for all the calls
    hint = ("cannot read or write Zstandard (.zst) files: install the 'zstandard' package "
            "(pip install zstandard) to read and write .zst")
    assert lines[2:4] == [f"True {hint}"] * 2
    assert lines[4] == "False False"
    assert stdlib_gzip.decompress((tmp_path / "a.svm.gz").read_bytes()) == b"1.0 1:1.5\n0.0 0:2.0\n"
    assert not (set(os.listdir(tmp_path)) - {"a.svm.gz", "c.svm.zst"})


def test_zst_without_a_codec_in_process(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)  # `import zstandard` now fails
    monkeypatch.setitem(sys.modules, "compression", None)
    with pytest.raises(CompressionUnavailableError, match=r"pip install zstandard"):
        save_libsvm(str(tmp_path / "a.svm.zst"), np.eye(2), [0, 1])
    assert os.listdir(tmp_path) == []


def test_compressed_error_location_in_zst(tmp_path):
    from sparsenet.io import LibSVMFormatError
    text = "".join(f"1 {i % 5}:1\n" for i in range(3000)) + "1 3:x\n"
    (tmp_path / "e.svm.zst").write_bytes(zstandard.ZstdCompressor().compress(text.encode()))
    with pytest.raises(LibSVMFormatError, match=r"e\.svm\.zst:3001:3: invalid feature value"):
        load_libsvm(str(tmp_path / "e.svm.zst"), chunk_size=4096)


# sharding: whole files per part -------------------------------------------------------------

def test_assign_files_balanced_and_deterministic():
    F = SourceFile
    files = [F(f"{i}.gz", s, "gzip") for i, s in enumerate([10, 50, 20, 20, 30, 5, 40, 25])]
    # worked by hand: largest first, each to the least-loaded part (ties to the lowest):
    # 50->0, 40->1, 30->2, 25->2, 20(#2)->1, 20(#3)->0, 10->2, 5->1
    owner = assign_files(files, 3)
    assert owner == [2, 0, 1, 0, 2, 1, 1, 2]
    loads = [sum(f.size for f, o in zip(files, owner) if o == k) for k in range(3)]
    assert loads == [70, 65, 65]
    assert assign_files(files[:2], 3) is None and assign_files(files, 1) is None


def test_parts_decompress_only_their_files(tmp_path):
    for i in range(8):
        (tmp_path / f"d{i}.svm.gz").write_bytes(gzip.compress(
            "".join(f"{i} {j % 9}:1\n" for j in range(100 + 10 * i)).encode()))
    files = list_files(str(tmp_path))
    seen = []
    for k in range(4):
        tasks = plan(files, 4, k)
        assert all(t.num_parts == 1 for t in tasks)  # each file read whole, by one part
        seen += [t.file.path for t in tasks]
        _, label = load_libsvm(str(tmp_path), num_parts=4, part_index=k)
        assert sorted(set(label.asnumpy().tolist())) == sorted(
            int(os.path.basename(t.file.path)[1]) for t in tasks)
    assert sorted(seen) == sorted(f.path for f in files)
    labels = []
    for k in range(3):  # 8 files over 3 parts, through the iterator
        it = LibSVMIter(data_libsvm=str(tmp_path), data_shape=(9,), batch_size=7,
                        round_batch=False, num_parts=3, part_index=k)
        labels += [int(v) for b in it for v in b.label[0].asnumpy()]
    assert sorted(labels) == sorted(i for i in range(8) for _ in range(100 + 10 * i))


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=7),
       kinds=st.lists(st.sampled_from(["", ".gz", ".zst", ".xz"]), min_size=7, max_size=7),
       num_parts=st.integers(1, 5))
def test_partition_is_exact(sizes, kinds, num_parts):
    with tempfile.TemporaryDirectory() as d:
        row = 0
        for i, n in enumerate(sizes):
            text = "".join(f"{row + j} {j % 3}:1\n" for j in range(n)).encode()
            row += n
            name = os.path.join(d, f"f{i}.svm{kinds[i]}")
            packed = {"": bytes, ".gz": gzip.compress, ".xz": lzma.compress,
                      ".zst": zstandard.ZstdCompressor().compress}[kinds[i]](text)
            open(name, "wb").write(packed)
        got = []
        for k in range(num_parts):
            _, label = load_libsvm(d, num_parts=num_parts, part_index=k, num_features=3,
                                   chunk_size=64)
            got += label.asnumpy().astype(int).tolist()
        assert sorted(got) == list(range(row))


def test_text_size_hint(tmp_path):
    from sparsenet.io.libsvm.compression import text_size_hint
    text = "".join(f"{i % 2} {i % 7}:{i}\n" for i in range(3000)).encode()
    assert len(text) == 25890  # by hand: 3000 lines * 5 bytes + 10,890 digits
    cases = {"a.gz": gzip.compress(text), "a.zst": zstandard.ZstdCompressor().compress(text),
             "a.xz": lzma.compress(text), "t.gz": gzip.compress(text)[:10]}
    got = {}
    for name, raw in cases.items():
        (tmp_path / name).write_bytes(raw)
        fmt = {"gz": "gzip", "zst": "zstd", "xz": "xz"}[name.split(".")[1]]
        got[name] = text_size_hint(str(tmp_path / name), fmt, len(raw))
    assert got["a.gz"] == 25890 and got["a.zst"] == 25890
    assert got["a.xz"] == 3 * len(cases["a.xz"]) and got["t.gz"] == 30
    (tmp_path / "f.gz").write_bytes(cases["a.gz"][:-4] + (1 << 31).to_bytes(4, "little"))
    assert text_size_hint(str(tmp_path / "f.gz"), "gzip", len(cases["a.gz"])) == 1032 * len(
        cases["a.gz"])  # a forged size field is capped
