"""One LibSVM file read in parts (``num_parts``/``part_index``) gives every part a near-equal
share, whatever the codec: plain, framed ``.gz``/``.zst`` (as sparsenet writes them) and
compressed streams (standard ``.gz``, ``.zst`` without frame sizes, ``.bz2``, ``.xz``).

The bug: a framed file shared by parts was shared by whole frames (4 MiB of text each), so an
8.3 MB ``.gz`` of 20,000 rows gave rows per part ``[0, 10114, 9886]`` with 3 parts. The
references are scikit-learn's ``load_svmlight_file`` of the uncompressed file and the line
lengths of that file; the bounds are the documented ones (module docstring of
``sparsenet.io.libsvm.source``): a plain or framed file's part holds within one line of
``T/n`` bytes of text, a compressed stream's within ``2*B + c*L`` (``c`` blocks of whole
lines of at least ``B = min(1 MiB, max(4 KiB, size on disk // (64 n)))`` bytes each, ``L``
the longest line).
"""
import bz2
import gzip
import lzma
import os
import tempfile
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.io.libsvm import gzip_members, source, zstd_frames

zstandard = pytest.importorskip("zstandard")
datasets = pytest.importorskip("sklearn.datasets")

CODECS = ["plain", "gz-framed", "zst-framed", "gz-stream", "zst-stream", "bz2", "xz"]
_SUFFIX = {"plain": ".svm", "gz-framed": ".svm.gz", "zst-framed": ".svm.zst",
           "gz-stream": ".svm.gz", "zst-stream": ".svm.zst", "bz2": ".svm.bz2",
           "xz": ".svm.xz"}


def _write(path, text, codec, frame_bytes):
    """``text`` written to ``path`` with ``codec`` (framed ones: ``frame_bytes`` per frame)."""
    if codec == "plain":
        open(path, "wb").write(text)
    elif codec in ("gz-framed", "zst-framed"):
        w = (gzip_members.MemberWriter(path, 1, zlib, frame_bytes=frame_bytes)
             if codec == "gz-framed" else
             zstd_frames.FramedWriter(zstandard, path, 1, frame_bytes=frame_bytes))
        with w:
            w.write(text)
    elif codec == "gz-stream":
        open(path, "wb").write(gzip.compress(text, 1))
    elif codec == "zst-stream":  # one frame that does not say how much text it holds
        cctx = zstandard.ZstdCompressor(level=1, write_content_size=False)
        open(path, "wb").write(cctx.compress(text))
    elif codec == "bz2":
        open(path, "wb").write(bz2.compress(text, 1))
    else:
        open(path, "wb").write(lzma.compress(text, preset=0))


def _byte_bound(codec, path, num_parts, longest, total):
    """How far a part's bytes of text may be from ``T / num_parts`` (documented bound)."""
    if codec in ("plain", "gz-framed", "zst-framed"):
        return longest + 1
    block = min(source.SHARD_BLOCK,
                max(source.MIN_SHARD_BLOCK, os.path.getsize(path) // (64 * num_parts)))
    blocks = total // (num_parts * block) + 2  # the most blocks of at least `block` bytes
    return 2 * block + blocks * longest


def _check_parts(path, codec, text, num_parts, num_features, **kw):
    """Load every part; check they are disjoint, cover every row once, each in file order
    (plain and framed files: one after the other), and hold near-equal bytes of text.
    Return the rows per part."""
    lengths = np.array([len(line) for line in text.splitlines(keepends=True)])
    total, rows = int(lengths.sum()), len(lengths)
    bound = _byte_bound(codec, path, num_parts, int(lengths.max(initial=0)), total)
    labels, counts = [], []
    for k in range(num_parts):
        _, label = mx.io.load_libsvm(path, num_features=num_features, num_parts=num_parts,
                                     part_index=k, **kw)
        mine = label.asnumpy().astype(np.int64)
        assert (np.diff(mine) > 0).all(), f"part {k}: rows out of file order"
        got = int(lengths[mine].sum())
        assert abs(got - total / num_parts) <= bound, (
            f"{codec} part {k} of {num_parts}: {got} bytes of text, want "
            f"{total / num_parts:.0f} +- {bound}")
        labels.append(mine)
        counts.append(len(mine))
    every = np.concatenate(labels)
    assert np.array_equal(np.sort(every), np.arange(rows))  # disjoint, every row once
    if codec in ("plain", "gz-framed", "zst-framed"):
        assert np.array_equal(every, np.arange(rows))  # parts one after the other
    return counts


# fixed-width rows: bytes of text and rows are proportional -----------------------------------

_WIDTH_ROWS, _WIDTH_FEATURES = 3000, 300


def _fixed_width_text(seed=0):
    """Row i: label i (5 digits), then 12 features ``jjj:0.vvv``: every line 126 bytes."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(_WIDTH_ROWS):
        cols = np.sort(rng.choice(_WIDTH_FEATURES, 12, replace=False))
        vals = rng.integers(100, 1000, 12)
        lines.append(f"{i:05d}" + "".join(f" {c:03d}:0.{v}" for c, v in zip(cols, vals)))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("codec", CODECS)
def test_every_part_gets_a_near_equal_share_of_one_file(tmp_path, codec, backend):
    text = _fixed_width_text()
    line = len(text) // _WIDTH_ROWS
    plain = str(tmp_path / "ref.svm")
    open(plain, "wb").write(text)
    want_x, want_y = datasets.load_svmlight_file(plain, n_features=_WIDTH_FEATURES,
                                                 zero_based=True)
    path = str(tmp_path / ("data" + _SUFFIX[codec]))
    _write(path, text, codec, frame_bytes=len(text) // 3 + 1)  # 3 frames, fewer than parts
    for n in range(1, 6):
        counts = _check_parts(path, codec, text, n, _WIDTH_FEATURES)
        bound = _byte_bound(codec, path, n, line, len(text)) // line + 1
        assert max(abs(c - _WIDTH_ROWS / n) for c in counts) <= bound, (codec, n, counts)
        if codec in ("plain", "gz-framed", "zst-framed"):
            assert max(counts) - min(counts) <= 2, (codec, n, counts)
        parts = [mx.io.load_libsvm(path, num_features=_WIDTH_FEATURES, num_parts=n,
                                   part_index=k) for k in range(n)]
        got_y = np.concatenate([p[1].asnumpy() for p in parts])
        got_x = sp.vstack([p[0].asscipy() for p in parts]).tocsr()
        order = np.argsort(got_y, kind="stable")  # streams: parts interleave blocks
        np.testing.assert_array_equal(got_y[order], want_y)
        assert (got_x[order] != want_x.astype(np.float32)).nnz == 0


# the reported case: 20,000 rows, 8.3 MB of text, two 4 MiB frames --------------------------

@pytest.mark.parametrize("suffix", [".svm.gz", ".svm.zst"])
def test_the_reported_file_is_split_evenly(tmp_path, suffix):
    rng = np.random.default_rng(7)
    x = sp.random(20_000, 50_000, density=5e-4, format="csr", dtype=np.float32,
                  random_state=rng)
    y = rng.integers(0, 2, x.shape[0]).astype(np.float32)
    plain, path = str(tmp_path / "data.svm"), str(tmp_path / ("data" + suffix))
    mx.io.save_libsvm(plain, x, y)
    mx.io.save_libsvm(path, x, y)
    text = open(plain, "rb").read()
    lengths = np.array([len(s) for s in text.splitlines(keepends=True)])
    assert len(text) > 8_000_000  # two frames of 4 MiB
    for n in (2, 3, 4, 5):
        # rows per part: before the fix [0, 10114, 9886] for n=3, [0, 10114, 0, 9886] for 4
        counts = [mx.io.load_libsvm(path, num_features=50_000, num_parts=n,
                                    part_index=k)[0].shape[0] for k in range(n)]
        assert sum(counts) == 20_000
        slack = int(lengths.max()) // int(lengths.min()) + 1  # one line, in rows
        spread = 20_000 / n * 0.02 + slack  # row lengths vary: 2% on top of one line
        assert max(abs(c - 20_000 / n) for c in counts) <= spread, (n, counts)


# property: any row lengths, frame sizes, codecs and part counts -----------------------------

@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(0, 40), min_size=0, max_size=120),
       frame_bytes=st.integers(1, 400), codec=st.sampled_from(CODECS),
       num_parts=st.integers(1, 5), min_block=st.integers(1, 64),
       trailing=st.booleans())
def test_parts_partition_any_file_evenly(lengths, frame_bytes, codec, num_parts, min_block,
                                         trailing):
    lines = [f"{i}" + "".join(f" {j}:1" for j in range(n)) for i, n in enumerate(lengths)]
    text = ("\n".join(lines) + ("\n" if trailing and lines else "")).encode()
    with tempfile.TemporaryDirectory() as d, pytest.MonkeyPatch.context() as mp:
        mp.setattr(source, "MIN_SHARD_BLOCK", min_block)  # small blocks in a small file
        path = os.path.join(d, "p" + _SUFFIX[codec])
        _write(path, text, codec, frame_bytes)
        _check_parts(path, codec, text, num_parts, 41, chunk_size=frame_bytes * 2)


@pytest.mark.parametrize("codec", ["bz2", "xz", "gz-stream"])
def test_lines_longer_than_a_block_are_shared_row_by_row(tmp_path, codec):
    # 60 lines of ~6,100 bytes, blocks of 4 KiB: blocks fixed at multiples of 4 KiB would hold
    # the starts of 1 or 2 lines in a pattern that starves a part; a block is one line here,
    # so the 3 parts get rows 0, 3, 6, ... / 1, 4, 7, ... / 2, 5, 8, ... (20 each)
    lines = [f"{i}" + "".join(f" {j}:{j % 7 + 1}" for j in range(1000)) for i in range(60)]
    text = ("\n".join(lines) + "\n").encode()
    path = str(tmp_path / ("long" + _SUFFIX[codec]))
    _write(path, text, codec, 0)
    assert source.shard_block(source.list_files(path)[0], 3) < min(map(len, lines))
    for k in range(3):
        _, label = mx.io.load_libsvm(path, num_features=1000, num_parts=3, part_index=k)
        assert label.asnumpy().astype(int).tolist() == list(range(k, 60, 3))
