"""Issue 32, items 4 and 5: compressed LibSVM input.

4. A ``.zst`` frame or an ``SN`` gzip member whose header declares 0 bytes of text but holds
   rows: ``zstd -d`` / ``gzip -d`` refuse such a file, so must sparsenet (a CompressedFileError
   naming the file), never drop the rows.
5. Decompression bombs load in bounded memory (peak RSS measured in a child process) and in
   seconds, for every codec; many tiny frames are read as fast as a few large ones.

The files are made here by hand (frame and member headers written byte by byte after the
formats' RFCs, RFC 8878 and RFC 1952) or by the codecs' own writers; the references are the
``zstd``/``gzip`` command-line tools, the standard library's readers and rows built in the
test.
"""
import bz2
import gzip
import lzma
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import time
import zlib

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.io.libsvm import kernel
from sparsenet.io.libsvm.compression import CompressedFileError, open_read
from sparsenet.io.libsvm.source import FrameTask, StreamTask, list_files, plan

zstandard = pytest.importorskip("zstandard")

ROWS = [b"1 0:1 3:2\n", b"0 1:-1\n", b"1 2:0.5\n", b"0 0:4 1:4\n", b"1 3:3\n", b"0 2:2\n"]


def _dense(rows):
    """The dense matrix and labels of LibSVM ``rows`` (zero-based), parsed by hand."""
    labels, table = [], []
    for row in rows:
        label, *tokens = row.split()
        labels.append(float(label))
        table.append({int(k): float(v) for k, v in (t.split(b":") for t in tokens)})
    width = 1 + max((k for r in table for k in r), default=-1)
    out = np.zeros((len(rows), width), np.float32)
    for i, r in enumerate(table):
        for k, v in r.items():
            out[i, k] = v
    return out, np.array(labels, np.float32)


# the formats by hand -------------------------------------------------------------------------

def _zst_frame(text, declare=None, sized=True):
    """One Zstandard frame of ``text`` whose header declares ``declare`` bytes (default: the
    truth); ``sized=False``: no content size in the header (as written from a pipe)."""
    frame = bytearray(zstandard.ZstdCompressor(write_content_size=sized,
                                               write_checksum=True).compress(text))
    if declare is not None:
        desc = frame[4]  # RFC 8878 3.1.1.1.1: single segment, 1-byte Frame_Content_Size
        assert desc & 0x20 and desc >> 6 == 0 and desc & 3 == 0 and len(text) < 256
        frame[5] = declare
    return bytes(frame)


def _sn_member(text, declare=None, isize=None):
    """One gzip member of ``text`` carrying sparsenet's ``SN`` extra subfield (RFC 1952 2.3.1.1:
    the member's length and its text size, unsigned 32-bit little-endian), which declares
    ``declare`` bytes of text (default: the truth); ISIZE is ``isize`` (default: the same)."""
    declare = len(text) if declare is None else declare
    isize = declare if isize is None else isize
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflate = c.compress(text) + c.flush()
    length = 10 + 2 + 12 + len(deflate) + 8
    head = struct.pack("<BBBBIBBH2sHII", 0x1F, 0x8B, 8, 0x04, 0, 0, 255, 12, b"SN", 8,
                       length, declare)
    return head + deflate + struct.pack("<II", zlib.crc32(text), isize)


def _refused_by(tool, path):
    """Whether the command-line ``tool`` (zstd or gzip) refuses to decompress ``path``."""
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    return subprocess.run([tool, "-dc", str(path)], capture_output=True).returncode != 0


# 4. a piece declaring 0 bytes but holding rows --------------------------------------------

ZERO_CASES = {  # name -> (file name, bytes): the middle piece declares 0 bytes, holds 2 rows
    "zst-sized": ("z.svm.zst", lambda: _zst_frame(b"".join(ROWS[:2]))
                  + _zst_frame(b"".join(ROWS[2:4]), declare=0) + _zst_frame(b"".join(ROWS[4:]))),
    # a frame without content size: the file takes the streaming reader, which checks too
    "zst-streamed": ("s.svm.zst", lambda: _zst_frame(b"".join(ROWS[:2]), sized=False)
                     + _zst_frame(b"".join(ROWS[2:4]), declare=0)
                     + _zst_frame(b"".join(ROWS[4:]))),
    # the piece before ends inside a line: the zero piece is reached for that line's end
    "zst-mid-line": ("m.svm.zst", lambda: _zst_frame(b"".join(ROWS[:2]) + b"1 2:")
                     + _zst_frame(b"0.5\n" + ROWS[3], declare=0)
                     + _zst_frame(b"".join(ROWS[4:]))),
    "gz": ("g.svm.gz", lambda: _sn_member(b"".join(ROWS[:2]))
           + _sn_member(b"".join(ROWS[2:4]), declare=0) + _sn_member(b"".join(ROWS[4:]))),
    "gz-mid-line": ("h.svm.gz", lambda: _sn_member(b"".join(ROWS[:2]) + b"1 2:")
                    + _sn_member(b"0.5\n" + ROWS[3], declare=0)
                    + _sn_member(b"".join(ROWS[4:]))),
}


@pytest.mark.parametrize("case", sorted(ZERO_CASES))
def test_a_piece_declaring_zero_bytes_but_holding_rows_is_refused(tmp_path, case):
    name, make = ZERO_CASES[case]
    path = tmp_path / name
    path.write_bytes(make())
    assert _refused_by("zstd" if name.endswith(".zst") else "gzip", path)
    pattern = rf"{path.name}: truncated or corrupt"
    for kw in ({}, {"chunk_size": 1}):  # a run of frames per task; a frame per task
        with pytest.raises(CompressedFileError, match=pattern):
            mx.io.load_libsvm(str(path), **kw)
    with pytest.raises(CompressedFileError, match=pattern):  # shared by parts: some part
        for k in range(2):
            mx.io.load_libsvm(str(path), num_parts=2, part_index=k, chunk_size=1)
    with pytest.raises(mx.MXNetError, match=pattern):
        with open_read(str(path), "zstd" if name.endswith(".zst") else "gzip") as f:
            f.read()
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(4,), batch_size=2)
    with pytest.raises(CompressedFileError, match=pattern):
        list(it)


@pytest.mark.parametrize("suffix", [".zst", ".gz"])
def test_a_piece_that_truly_holds_nothing_still_loads(tmp_path, suffix):
    piece = _zst_frame if suffix == ".zst" else _sn_member
    path = tmp_path / ("e.svm" + suffix)
    path.write_bytes(piece(b"".join(ROWS[:3])) + piece(b"") + piece(b"".join(ROWS[3:])))
    assert not _refused_by("zstd" if suffix == ".zst" else "gzip", path)
    want, labels = _dense(ROWS)
    for chunk_size in (1, 1 << 20):
        data, label = mx.io.load_libsvm(str(path), chunk_size=chunk_size)
        np.testing.assert_array_equal(data.asnumpy(), want)
        np.testing.assert_array_equal(label.asnumpy(), labels)


def test_a_zero_sized_member_with_an_honest_isize_reads_as_gzip_does(tmp_path):
    # the SN field says 0, ISIZE the truth: not sparsenet's layout, so the file is read as
    # any gzip file (as gzip -d reads it: the SN field is only a hint to skip)
    path = tmp_path / "i.svm.gz"
    path.write_bytes(_sn_member(b"".join(ROWS[:3])) + _sn_member(b"".join(ROWS[3:]), declare=0,
                                                                 isize=len(b"".join(ROWS[3:]))))
    assert gzip.decompress(path.read_bytes()) == b"".join(ROWS)
    assert all(isinstance(t, StreamTask) for t in plan(list_files(str(path))))
    data, _ = mx.io.load_libsvm(str(path))
    np.testing.assert_array_equal(data.asnumpy(), _dense(ROWS)[0])


# 5. bombs: bounded memory whatever the ratio ----------------------------------------------

GIB = 1 << 30
BLOCK = b"\n" * (1 << 20)


def _write_bomb(path, kind, total):
    """``total`` bytes of newlines (0 rows) compressed as ``kind``."""
    if kind == "zst-streamed":  # no content size in the frame: the streaming reader
        with open(path, "wb") as f, zstandard.ZstdCompressor(level=3).stream_writer(f) as w:
            for _ in range(total >> 20):
                w.write(BLOCK)
    elif kind == "zst-frames":  # frames declaring their size: read by the parsing threads
        frame = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(
            BLOCK * 16)
        with open(path, "wb") as f:
            for _ in range(total >> 24):
                f.write(frame)
    elif kind == "zst-big-frames":  # frames declaring more than a task holds: streamed
        frame = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(
            BLOCK * 256)
        with open(path, "wb") as f:
            for _ in range(total >> 28):
                f.write(frame)
    elif kind == "gz-members":
        member = _sn_member(BLOCK * 16)
        with open(path, "wb") as f:
            for _ in range(total >> 24):
                f.write(member)
    else:
        opener = {"gz": lambda: gzip.open(path, "wb", 6), "bz2": lambda: bz2.open(path, "wb"),
                  "xz": lambda: lzma.open(path, "wb", preset=1)}[kind]
        with opener() as w:
            for _ in range(total >> 20):
                w.write(BLOCK)


_CHILD = textwrap.dedent("""
    import resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # a runaway fails, not swaps
    import os, tempfile
    import sparsenet as mx
    def hwm():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) << 10
    # the baseline after the loader and torch are in (import sparsenet loads them lazily)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "one.svm"), "w") as f:
            f.write("1 1:1\\n")
        mx.io.load_libsvm(os.path.join(d, "one.svm"), num_features=4)
    base = hwm()
    t = time.perf_counter()
    data, label = mx.io.load_libsvm(sys.argv[1], num_features=4)
    print(data.shape[0], time.perf_counter() - t, base, hwm())
""")


def _load_in_child(path):
    """(rows, seconds, peak RSS before loading, peak RSS) of a child process loading ``path``."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    rows, seconds, base, peak = out.stdout.split()
    return int(rows), float(seconds), int(base), int(peak)


@pytest.mark.slow
@pytest.mark.skipif(kernel.BACKEND != "native",
                    reason="the bounds are the decompressors'; the Python reference parser "
                           "takes minutes per GiB of text")
@pytest.mark.parametrize("kind,suffix,total", [
    ("zst-streamed", ".zst", GIB), ("zst-frames", ".zst", GIB),
    ("zst-big-frames", ".zst", GIB), ("gz-members", ".gz", GIB), ("gz", ".gz", GIB // 2),
    ("bz2", ".bz2", GIB // 4), ("xz", ".xz", GIB // 4)])
def test_a_decompression_bomb_loads_in_bounded_memory_and_seconds(tmp_path, kind, suffix,
                                                                  total):
    path = tmp_path / ("bomb.svm" + suffix)
    _write_bomb(str(path), kind, total)
    if kind == "zst-streamed":
        assert path.stat().st_size < 64 << 10  # the 32 KB file of 1 GiB
        head = zstandard.get_frame_parameters(path.read_bytes()[:18])
        assert head.content_size == zstandard.CONTENTSIZE_UNKNOWN  # written streamed
    rows, seconds, base, peak = _load_in_child(path)
    assert rows == 0  # blank lines hold no rows
    assert peak < 400 << 20, f"peak RSS {peak >> 20} MiB (before loading {base >> 20} MiB)"
    assert peak - base < 160 << 20, f"loading took {(peak - base) >> 20} MiB"
    assert seconds < 60, f"{seconds:.1f} s"


def test_the_streaming_zst_reader_holds_what_one_read_asks(tmp_path):
    # a frame inflating 16 MiB from a few hundred bytes, read 1 KiB at a time: each read
    # returns at most what it asks (before: the whole frame at once, then sliced per read)
    path = tmp_path / "r.zst"
    with open(path, "wb") as f, zstandard.ZstdCompressor().stream_writer(f) as w:
        w.write(b"\n" * (16 << 20))
    with open_read(str(path), "zstd") as r:
        sizes = [len(r.read(1024)) for _ in range(100)]
        rest = 0
        while True:
            piece = r.read(1 << 20)
            assert len(piece) <= 1 << 20
            if not piece:
                break
            rest += len(piece)
    assert sizes == [1024] * 100 and rest == (16 << 20) - 102400


# many tiny frames -----------------------------------------------------------------------

def _tiny_rows(n):
    return [b"%d %d:%d.5 %d:1\n" % (i % 2, i % 7, i, 7 + i % 5) for i in range(n)]


@pytest.mark.parametrize("kind", ["zst-sized", "zst-streamed", "gz-members"])
def test_many_tiny_frames_load_every_row_fast(tmp_path, kind):
    rows = _tiny_rows(20000)
    path = tmp_path / ("tiny.svm" + (".gz" if kind == "gz-members" else ".zst"))
    if kind == "gz-members":
        blob = b"".join(_sn_member(r) for r in rows)
    else:
        cctx = zstandard.ZstdCompressor(level=1, write_content_size=kind == "zst-sized")
        blob = b"".join(cctx.compress(r) for r in rows)
    path.write_bytes(blob)
    tasks = plan(list_files(str(path)))
    if kind != "zst-streamed":  # a task per run of frames, not one per frame
        assert all(isinstance(t, FrameTask) for t in tasks) and len(tasks) == 1
    want, labels = _dense(rows)
    t = time.perf_counter()
    data, label = mx.io.load_libsvm(str(path), num_features=want.shape[1])
    seconds = time.perf_counter() - t
    np.testing.assert_array_equal(data.asnumpy(), want)
    np.testing.assert_array_equal(label.asnumpy(), labels)
    assert seconds < 10, f"{seconds:.1f} s for 20,000 frames"
    _, label = mx.io.load_libsvm(str(path), num_features=want.shape[1], chunk_size=4096)
    np.testing.assert_array_equal(label.asnumpy(), labels)  # runs of a few frames each
