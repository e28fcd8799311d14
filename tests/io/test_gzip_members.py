"""Issue 22: .gz files written as members that say where they end and how much text they
hold, read with the members decompressed in parallel; framed .gz and .zst files shared by
parts frame by frame. The references are the standard library's gzip reader, ``gzip -d``,
ISA-L's reader, and row labels written by hand (row i has label i)."""
import gzip
import os
import shutil
import struct
import subprocess
import tempfile
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.io.libsvm import gzip_members, zstd_frames
from sparsenet.io.libsvm.compression import CompressedFileError, frame_table
from sparsenet.io.libsvm.source import FrameTask, StreamTask, list_files, plan

isal_zlib = pytest.importorskip("isal.isal_zlib")
zstandard = pytest.importorskip("zstandard")


def _rows_text(lengths, trailing_newline=True):
    """Row i: label i, then lengths[i] features 'j:1' (j = 0, 1, ...): rows of any length."""
    lines = [f"{i}" + "".join(f" {j}:1" for j in range(n)) for i, n in enumerate(lengths)]
    return ("\n".join(lines) + ("\n" if trailing_newline else "")).encode()


def _write(path, text, frame_bytes, codec=None):
    """``text`` as a framed .gz (members) or .zst (frames) of ``frame_bytes`` each."""
    if path.endswith(".gz"):
        w = gzip_members.MemberWriter(path, 1, codec or isal_zlib, frame_bytes=frame_bytes)
    else:
        w = zstd_frames.FramedWriter(zstandard, path, 1, frame_bytes=frame_bytes)
    with w:
        for i in range(0, len(text), 1000):
            w.write(text[i:i + 1000])


def _check_rows(path, lengths, **kw):
    data, label = mx.io.load_libsvm(path, num_features=max(lengths) + 1, **kw)
    assert label.asnumpy().tolist() == list(range(len(lengths)))  # each row once, in order
    dense = data.asnumpy()
    for i, n in enumerate(lengths):
        assert dense[i, :n].tolist() == [1.0] * n and not dense[i, n:].any()


def test_save_libsvm_writes_members_every_gzip_reader_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(gzip_members, "MEMBER_TEXT_BYTES", 300)
    x = mx.nd.array(np.eye(400, 30, dtype=np.float32) * 2).tostype("csr")
    y = mx.nd.array(np.arange(400) % 3)
    path, plain = str(tmp_path / "d.svm.gz"), str(tmp_path / "d.svm")
    mx.io.save_libsvm(path, x, y)
    mx.io.save_libsvm(plain, x, y)
    text = open(plain, "rb").read()
    table = frame_table(path, "gzip")
    assert len(table) == -(-len(text) // 300) and [r[2] for r in table[:-1]] == [300] * (
        len(table) - 1)
    assert gzip.decompress(open(path, "rb").read()) == text  # the standard library
    from isal import igzip
    assert igzip.decompress(open(path, "rb").read()) == text
    if shutil.which("gzip"):
        assert subprocess.run(["gzip", "-dc", path], capture_output=True,
                              check=True).stdout == text
    back, labels = mx.io.load_libsvm(path, num_features=30)
    np.testing.assert_array_equal(back.asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(labels.asnumpy(), y.asnumpy())
    # the header, byte by byte (RFC 1952): FEXTRA, XLEN 12, subfield 'SN' of 8 bytes
    head = open(path, "rb").read(24)
    assert head[:4] == b"\x1f\x8b\x08\x04" and head[10:16] == b"\x0c\x00SN\x08\x00"
    assert struct.unpack("<II", head[16:24]) == (table[0][1], 300)


@pytest.mark.parametrize("codec", ["isal", "zlib"])
def test_members_of_either_codec_and_empty_text(tmp_path, codec):
    mod = isal_zlib if codec == "isal" else zlib
    text = _rows_text([3, 1, 4, 1, 5, 9, 2, 6] * 50)
    path = str(tmp_path / "m.svm.gz")
    _write(path, text, 700, mod)
    assert gzip.decompress(open(path, "rb").read()) == text
    _check_rows(path, [3, 1, 4, 1, 5, 9, 2, 6] * 50)
    empty = str(tmp_path / "e.svm.gz")
    _write(empty, b"", 700, mod)
    assert gzip.decompress(open(empty, "rb").read()) == b"" and os.path.getsize(empty) > 0
    assert mx.io.load_libsvm(empty, num_features=3)[0].shape == (0, 3)


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(0, 60), min_size=1, max_size=40),
       frame_bytes=st.integers(1, 300), trailing=st.booleans())
def test_members_are_parsed_one_task_each_every_row_once(lengths, frame_bytes, trailing):
    # members cut anywhere: inside a line, right after a newline, lines longer than a member
    text = _rows_text(lengths, trailing)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.svm.gz")
        _write(path, text, frame_bytes)
        tasks = plan(list_files(path), chunk_size=1)  # one task per member
        assert all(isinstance(t, FrameTask) for t in tasks)
        assert len(tasks) == -(-len(text) // frame_bytes)
        _check_rows(path, lengths, chunk_size=1)
        _check_rows(path, lengths, chunk_size=frame_bytes * 3)  # tasks of three members


def test_foreign_gzip_files_take_the_streaming_reader(tmp_path):
    text = _rows_text([2, 5, 1] * 300)
    one = tmp_path / "one.svm.gz"  # what `gzip` writes: one member, no SN subfield
    one.write_bytes(gzip.compress(text))
    mixed = tmp_path / "mixed.svm.gz"  # a sparsenet member, then a foreign one
    _write(str(mixed), text, 1 << 20)
    mixed.write_bytes(mixed.read_bytes() + gzip.compress(text))
    named = tmp_path / "named.svm.gz"  # a header with a file name: no SN subfield
    with open(named, "wb") as raw, gzip.GzipFile("x.svm", "wb", fileobj=raw) as w:
        w.write(text)
    for path, rows in ((one, [2, 5, 1] * 300), (named, [2, 5, 1] * 300)):
        assert frame_table(str(path), "gzip") is None
        assert all(isinstance(t, StreamTask) for t in plan(list_files(str(path))))
        _check_rows(str(path), rows)
    assert frame_table(str(mixed), "gzip") is None
    data, label = mx.io.load_libsvm(str(mixed), num_features=6)
    assert label.asnumpy().tolist() == list(range(900)) * 2


def _members(path):
    return frame_table(path, "gzip")


def test_a_corrupt_member_names_the_file(tmp_path):
    text = _rows_text([7, 3, 9] * 700)
    path = tmp_path / "c.svm.gz"
    _write(str(path), text, 4000)
    table = _members(str(path))
    for what, offset in (("deflate data", 40), ("CRC-32", -8)):
        data = bytearray(path.read_bytes())
        pos = (table[1][0] + offset) if offset > 0 else table[1][1] + offset
        data[pos] ^= 0x5A
        bad = tmp_path / f"bad_{offset}.svm.gz"
        bad.write_bytes(bytes(data))
        assert _members(str(bad)) is not None, what  # the headers still walk
        with pytest.raises(CompressedFileError, match=rf"bad_{offset}\.svm\.gz: truncated or "
                                                      r"corrupt gzip data"):
            mx.io.load_libsvm(str(bad), num_features=10)


def test_forged_sizes_never_read_wrong_rows(tmp_path):
    text = _rows_text([4, 2] * 500)
    path = tmp_path / "f.svm.gz"
    _write(str(path), text, 3000)
    good = path.read_bytes()
    table = _members(str(path))
    start, stop, size, _ = table[0]
    ratio = 1033 * (stop - start)  # more text than deflate can hold in the member
    cases = {  # the header's field at `pos`, and the ISIZE in the trailer (None: kept)
        "text size one less": (20, size - 1, None),  # ISIZE disagrees
        "member past the file": (16, len(good) + 10, None),
        "a huge text size": (20, 0xFFFFFFF0, 0xFFFFFFF0),
        "past deflate's ratio": (20, ratio, ratio),
    }
    for name, (pos, value, isize) in cases.items():
        data = bytearray(good)
        data[start + pos:start + pos + 4] = struct.pack("<I", value)
        if isize is not None:
            data[stop - 4:stop] = struct.pack("<I", isize)
        p = tmp_path / "forged.svm.gz"
        p.write_bytes(bytes(data))
        assert _members(str(p)) is None, name  # the checks of the walk refuse it
        if isize is None:  # the streaming reader reads the file whole
            _check_rows(str(p), [4, 2] * 500)
        else:  # ... and finds the trailer wrong
            with pytest.raises(CompressedFileError, match=r"forged\.svm\.gz: truncated or"):
                mx.io.load_libsvm(str(p), num_features=5)
    # a text size that agrees with a forged ISIZE: decompression finds the difference
    data = bytearray(good)
    data[start + 20:start + 24] = struct.pack("<I", size + 5)
    data[stop - 4:stop] = struct.pack("<I", size + 5)
    p = tmp_path / "forged2.svm.gz"
    p.write_bytes(bytes(data))
    assert _members(str(p)) is not None
    with pytest.raises(CompressedFileError, match=r"forged2\.svm\.gz: truncated or corrupt"):
        mx.io.load_libsvm(str(p), num_features=5)


@pytest.mark.parametrize("cut", [5, 30, -3])
def test_a_truncated_member_file_names_the_file(tmp_path, cut):
    path = tmp_path / "t.svm.gz"
    _write(str(path), _rows_text([5] * 2000), 4000)
    data = path.read_bytes()
    path.write_bytes(data[:cut])
    with pytest.raises(CompressedFileError, match=r"t\.svm\.gz: truncated or corrupt"):
        mx.io.load_libsvm(str(path), num_features=50)


def test_a_line_across_members_past_max_line_bytes_names_file_and_line(tmp_path):
    from sparsenet.io import LibSVMFormatError
    text = b"1 0:1\n2 0:1\n1 " + b"0:1 " * (1 << 18) + b"\n1 0:1\n"  # a 1 MiB third line
    for frame_bytes in (1 << 16, 4 << 20):  # across many members; inside one member
        path = tmp_path / f"long{frame_bytes}.svm.gz"
        _write(str(path), text, frame_bytes)
        assert _members(str(path))
        with pytest.raises(LibSVMFormatError, match=rf"long{frame_bytes}\.svm\.gz:3: line "
                                                    r"longer than max_line_bytes=65536"):
            mx.io.load_libsvm(str(path), max_line_bytes=1 << 16, duplicates="sum")
        data, _ = mx.io.load_libsvm(str(path), duplicates="sum")
        assert data.asnumpy()[:, 0].tolist() == [1, 1, 1 << 18, 1]


# a framed file shared by parts: part k owns text [T*k//n, T*(k+1)//n) ------------------------

@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(0, 30), min_size=1, max_size=60),
       frame_bytes=st.integers(1, 200), num_parts=st.integers(2, 6),
       suffix=st.sampled_from([".gz", ".zst"]))
def test_a_framed_file_shared_by_parts_frame_by_frame(lengths, frame_bytes, num_parts, suffix):
    text = _rows_text(lengths)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.svm" + suffix)
        _write(path, text, frame_bytes)
        frames = -(-len(text) // frame_bytes)
        labels, owned = [], []
        for k in range(num_parts):
            tasks = plan(list_files(path), num_parts, k, chunk_size=1)  # a task per frame
            assert all(isinstance(t, FrameTask) for t in tasks)  # no part streams the file
            owned += [t.index for t in tasks]
            _, label = mx.io.load_libsvm(path, num_features=31, num_parts=num_parts,
                                         part_index=k)
            labels += label.asnumpy().astype(int).tolist()
        # every frame decompressed by a part, in order; one across a boundary by both parts
        assert sorted(set(owned)) == list(range(frames)) and owned == sorted(owned)
        assert labels == list(range(len(lengths)))  # every row in exactly one part, in order


def test_the_iterator_shares_a_framed_file_by_frames(tmp_path):
    lengths = [3, 1, 2] * 400
    path = str(tmp_path / "it.svm.gz")
    _write(path, _rows_text(lengths), 500)
    labels = []
    for k in range(3):
        it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(4,), batch_size=64,
                              round_batch=False, num_parts=3, part_index=k)
        labels += [int(v) for b in it for v in b.label[0].asnumpy()[:64 - b.pad]]
    assert labels == list(range(len(lengths)))
