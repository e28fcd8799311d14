"""Issue 22: .zst files written as frames that declare their size, read with the frames
decompressed in parallel. The reference is the zstandard package's own streaming reader
(and the text itself); foreign files (one frame without a declared size, frames mixed,
skippable frames) take the streaming reader and give the same bytes."""
import io
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.io.libsvm import zstd_frames
from sparsenet.io.libsvm.compression import CompressedFileError, open_read

zstandard = pytest.importorskip("zstandard")


def _text(rows=3000, seed=0):
    rng = np.random.default_rng(seed)
    lines = [f"{rng.integers(0, 2)} " + " ".join(f"{j}:{rng.random():.4f}" for j in
                                                 sorted(rng.choice(50, 5, replace=False)))
             for _ in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def _reference(path):
    with open(path, "rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True).read()


def _read_all(path, size=1 << 14):
    out = []
    with open_read(path, "zstd") as f:
        while True:
            b = f.read(size)
            if not b:
                return b"".join(out)
            out.append(bytes(b))


def test_save_libsvm_writes_sized_frames_read_in_parallel(tmp_path, monkeypatch):
    monkeypatch.setattr(zstd_frames, "FRAME_TEXT_BYTES", 300)
    x = mx.nd.array(np.eye(400, 30, dtype=np.float32) * 2).tostype("csr")
    y = mx.nd.array(np.arange(400) % 3)
    path = str(tmp_path / "d.svm.zst")
    mx.io.save_libsvm(path, x, y)
    data = open(path, "rb").read()
    spans = zstd_frames.frame_spans(data)
    assert len(spans) > 1 and all(s.content > 0 for s in spans)
    assert zstd_frames.FramedReader.open(zstandard, path) is not None
    assert _read_all(path) == _reference(path)
    back, labels = mx.io.load_libsvm(path, num_features=30)
    np.testing.assert_array_equal(back.asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(labels.asnumpy(), y.asnumpy())


@pytest.mark.parametrize("chunk", [1, 7, 1 << 12, 1 << 20])
def test_framed_reader_returns_the_bytes_in_any_read_size(tmp_path, chunk):
    text = _text()
    path = str(tmp_path / "t.svm.zst")
    with zstd_frames.FramedWriter(zstandard, path, 3, frame_bytes=5000) as w:
        for i in range(0, len(text), 3333):
            w.write(text[i:i + 3333])
    assert _reference(path) == text
    with zstd_frames.FramedReader.open(zstandard, path) as r:
        out = []
        while True:
            b = r.read(chunk)
            if not b:
                break
            assert len(b) <= chunk
            out.append(b)
    assert b"".join(out) == text


def test_foreign_files_take_the_streaming_reader(tmp_path):
    text = _text(seed=1)
    single = tmp_path / "single.svm.zst"  # one frame, no content size (zstd's streaming mode)
    buf = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(buf, closefd=False) as w:
        w.write(text)
    single.write_bytes(buf.getvalue())
    assert zstd_frames.FramedReader.open(zstandard, str(single)) is None
    assert _read_all(str(single)) == text
    mixed = tmp_path / "mixed.svm.zst"  # a sized frame, then the unsized one
    sized = zstandard.ZstdCompressor().compress(text)
    mixed.write_bytes(sized + buf.getvalue())
    assert zstd_frames.FramedReader.open(zstandard, str(mixed)) is None
    assert _read_all(str(mixed)) == text + text
    skippable = tmp_path / "skip.svm.zst"  # a skippable (metadata) frame between sized ones
    skip = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    skippable.write_bytes(sized + skip + sized)
    assert zstd_frames.FramedReader.open(zstandard, str(skippable)) is not None
    assert _read_all(str(skippable)) == text + text == _reference(str(skippable))


def test_empty_input_is_one_empty_frame(tmp_path):
    path = str(tmp_path / "e.svm.zst")
    with zstd_frames.FramedWriter(zstandard, path, 3):
        pass
    assert _reference(path) == b"" and _read_all(path) == b""
    assert os.path.getsize(path) > 0


@pytest.mark.parametrize("cut", [5, 100, -3])
def test_a_truncated_framed_file_names_the_file(tmp_path, cut):
    text = _text(seed=2)
    path = tmp_path / "t.svm.zst"
    with zstd_frames.FramedWriter(zstandard, str(path), 3, frame_bytes=4000) as w:
        w.write(text)
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut > 0 else data[:cut])
    with pytest.raises(CompressedFileError, match=str(path)):
        _read_all(str(path))
    with pytest.raises(mx.MXNetError, match=str(path)):
        mx.io.load_libsvm(str(path), num_features=50)


# frames read like plain files: one task per frame (source.FrameTask) --------------------------

def _rows_text(lengths, trailing_newline=True):
    """Row i: label i, then lengths[i] features 'j:1' (j = 0, 1, ...): rows of any length."""
    lines = [f"{i}" + "".join(f" {j}:1" for j in range(n)) for i, n in enumerate(lengths)]
    return ("\n".join(lines) + ("\n" if trailing_newline else "")).encode()


def _check_rows(path, lengths, **kw):
    data, label = mx.io.load_libsvm(path, num_features=max(lengths) + 1, **kw)
    assert label.asnumpy().tolist() == list(range(len(lengths)))  # each row once, in order
    dense = data.asnumpy()
    for i, n in enumerate(lengths):
        assert dense[i, :n].tolist() == [1.0] * n and not dense[i, n:].any()


def _frame_tasks(path):
    from sparsenet.io.libsvm.source import FrameTask, list_files, plan
    # chunk_size=1: one task per frame (a task holds consecutive frames up to chunk_size)
    return [t for t in plan(list_files(path), chunk_size=1) if isinstance(t, FrameTask)]


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(0, 60), min_size=1, max_size=40),
       frame_bytes=st.integers(1, 300), trailing=st.booleans())
def test_frames_are_parsed_one_task_each_every_row_once(lengths, frame_bytes, trailing):
    # frames cut anywhere: inside a line, right after a newline, lines longer than a frame
    text = _rows_text(lengths, trailing)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.svm.zst")
        with zstd_frames.FramedWriter(zstandard, path, 1, frame_bytes=frame_bytes) as w:
            w.write(text)
        assert len(_frame_tasks(path)) == -(-len(text) // frame_bytes)
        _check_rows(path, lengths, chunk_size=1)  # tasks of one frame
        _check_rows(path, lengths, chunk_size=frame_bytes * 3)  # of three


def test_frames_ending_at_newlines_empty_and_skippable_frames(tmp_path):
    lengths = [3, 0, 5, 1, 7, 2]
    text = _rows_text(lengths)
    lines = text.splitlines(keepends=True)
    cctx = zstandard.ZstdCompressor()
    skip = (0x184D2A5F).to_bytes(4, "little") + (2).to_bytes(4, "little") + b"hi"
    blob = (cctx.compress(b"".join(lines[:2])) + cctx.compress(b"") + skip
            + cctx.compress(b"".join(lines[2:5])) + cctx.compress(lines[5]))
    path = tmp_path / "a.svm.zst"
    path.write_bytes(blob)
    # data frames only; the empty one too (its task checks that it holds nothing)
    assert [t.index for t in _frame_tasks(str(path))] == [0, 1, 2, 3]
    _check_rows(str(path), lengths)


def test_a_line_across_frames_past_max_line_bytes_names_file_and_line(tmp_path):
    from sparsenet.io import LibSVMFormatError
    text = b"1 0:1\n2 0:1\n1 " + b"0:1 " * (1 << 18) + b"\n1 0:1\n"  # a 1 MiB third line
    for frame_bytes in (1 << 16, 4 << 20):  # across many frames; inside one frame
        path = tmp_path / f"long{frame_bytes}.svm.zst"
        with zstd_frames.FramedWriter(zstandard, str(path), 1, frame_bytes=frame_bytes) as w:
            w.write(text)
        assert _frame_tasks(str(path))
        with pytest.raises(LibSVMFormatError, match=rf"long{frame_bytes}\.svm\.zst:3: line "
                                                    r"longer than max_line_bytes=65536"):
            mx.io.load_libsvm(str(path), max_line_bytes=1 << 16, duplicates="sum")
        data, _ = mx.io.load_libsvm(str(path), duplicates="sum")
        assert data.asnumpy()[:, 0].tolist() == [1, 1, 1 << 18, 1]


def test_a_corrupt_frame_names_the_file(tmp_path):
    text = _text(seed=4)
    path = tmp_path / "c.svm.zst"
    with zstd_frames.FramedWriter(zstandard, str(path), 1, frame_bytes=20000) as w:
        w.write(text)
    spans = zstd_frames.frame_spans(path.read_bytes())
    data = bytearray(path.read_bytes())
    mid = spans[1].start + 40  # inside the second frame's first block
    data[mid:mid + 200] = bytes(200)
    path.write_bytes(bytes(data))
    assert len(_frame_tasks(str(path))) == len(spans)  # the headers still walk
    with pytest.raises(CompressedFileError, match=str(path)):
        mx.io.load_libsvm(str(path), num_features=50)


# the frame walk needs no codec: its header parse against zstandard's ----------------------

@pytest.mark.parametrize("size", [0, 1, 255, 256, 257, 65791, 65792, 70000, 1 << 20])
@pytest.mark.parametrize("options", [{}, {"write_checksum": True},
                                     {"write_content_size": False}, {"write_dict_id": True}])
def test_frame_header_parse_matches_zstandard(size, options):
    text = bytes(range(256)) * (size // 256) + bytes(size % 256)
    kw = dict(options)
    if kw.pop("write_dict_id", False):
        d = zstandard.train_dictionary(1024, [bytes([i]) * 300 + b"%d" % i for i in range(100)])
        kw.update(dict_data=d, write_dict_id=True)
    frame = zstandard.ZstdCompressor(**kw).compress(text)
    pos, content, checksum = zstd_frames._frame_header(frame, 0)
    assert pos == zstandard.frame_header_size(frame)
    assert content == zstandard.frame_content_size(frame)
    assert checksum == bool(options.get("write_checksum"))
    assert zstd_frames.frame_spans(frame) == [zstd_frames.Span(0, len(frame), content)]


def test_frames_decode_with_the_stdlib_codec_interface(tmp_path, monkeypatch):
    # compression.zstd (Python >= 3.14) has the interface of backports.zstd, tested here
    backport = pytest.importorskip("backports.zstd")
    from sparsenet.io.libsvm import compression
    lengths = [3, 0, 9, 1, 4] * 200
    text = _rows_text(lengths)
    path = str(tmp_path / "b.svm.zst")
    with zstd_frames.FramedWriter(zstandard, path, 1, frame_bytes=997) as w:
        w.write(text)
    monkeypatch.setattr(compression, "_zstd_module", lambda: ("stdlib", backport))
    assert len(_frame_tasks(path)) == -(-len(text) // 997)
    _check_rows(path, lengths)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x55
    (tmp_path / "c.svm.zst").write_bytes(bytes(data))
    with pytest.raises(CompressedFileError, match=r"c\.svm\.zst: truncated or corrupt"):
        mx.io.load_libsvm(str(tmp_path / "c.svm.zst"), num_features=10)
