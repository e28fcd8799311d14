"""Issue 19, items 6, 7 and 9: LibSVM input that overflows (a class id to inf), a line past
max_line_bytes, a prefetch_buffer or batch_size larger than the file can feed: each a clear
error (path:line:column, or the argument named) or bounded work, never a bare Python error."""
import subprocess
import sys

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.io.libsvm import kernel as libsvm_kernel
from sparsenet.io.libsvm.errors import LibSVMFormatError


@pytest.mark.parametrize("kernel", ["native", "python"])
@pytest.mark.parametrize("label", ["1e400", "0,1e400", "-1e400"])
def test_an_overflowing_class_id_is_a_format_error(tmp_path, monkeypatch, kernel, label):
    if kernel == "native" and not libsvm_kernel.native_available():
        pytest.skip("the native LibSVM kernel is not built")
    monkeypatch.setattr(libsvm_kernel, "BACKEND", kernel)
    path = tmp_path / "ov.libsvm"
    path.write_text(f"1 0:1\n{label} 0:1\n")
    with pytest.raises(LibSVMFormatError, match=rf"ov.libsvm:2:1: invalid multi-label "
                                                rf"'{label}'") as err:
        mx.io.load_libsvm(str(path), multilabel=True)
    assert isinstance(err.value, (ValueError, mx.MXNetError))


@pytest.mark.parametrize("cache_bytes", [None, 0])
def test_a_huge_prefetch_buffer_is_bounded_by_the_file(tmp_path, cache_bytes):
    # repro: prefetch_buffer=10**7 on a 3000-line file never finished its constructor
    path = tmp_path / "a.libsvm"
    path.write_text("1 0:1 5:2\n" * 3000)
    code = (f"import sparsenet as mx; it = mx.io.LibSVMIter(data_libsvm={str(path)!r}, "
            f"data_shape=(10,), batch_size=100, prefetch_buffer=10**7, "
            f"cache_bytes={cache_bytes!r}); print(sum(1 for _ in it))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "30", out.stderr


@pytest.mark.parametrize("num_parts", [1, 2])
def test_a_compressed_line_past_max_line_bytes_is_refused_with_file_and_line(tmp_path, num_parts):
    import gzip
    path = tmp_path / "long.libsvm.gz"
    with gzip.open(path, "wb") as f:  # 12 KB on disk, one 12 MB line
        f.write(b"1 0:1\n2 0:1\n1 " + b"0:1 " * (3 << 20) + b"\n1 0:1\n")
    with pytest.raises(LibSVMFormatError, match=r"long.libsvm.gz:3: line longer than "
                                                r"max_line_bytes=1048576 bytes") as err:
        mx.io.load_libsvm(str(path), max_line_bytes=1 << 20, num_parts=num_parts,
                          part_index=0, duplicates="sum")
    assert err.value.line == 3 and err.value.path == str(path)
    with pytest.raises(LibSVMFormatError, match="max_line_bytes"):
        list(mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(1,), batch_size=2,
                              max_line_bytes=1 << 20, duplicates="sum"))
    # under the default limit (128 MiB) the line is read
    data, label = mx.io.load_libsvm(str(path), duplicates="sum")[:2]
    assert data.shape == (4, 1) and float(data.asnumpy()[2, 0]) == 3 << 20


@pytest.mark.parametrize("cache_bytes", [None, 0])  # cached part, streamed part
def test_a_batch_size_past_memory_is_refused_before_allocating(tmp_path, cache_bytes):
    # repro: batch_size=2**31 on a 2-line file allocated 16 GB (a list of 2**31 references to
    # the first rows) before failing; now the padded batch's size is checked first. The
    # limit is this machine's memory, so the repro runs in a child capped at 2 GiB of address
    # space: it must fail with the documented error, not a MemoryError
    path = tmp_path / "tiny.svm"
    path.write_text("1 0:1 2:3\n0 1:2\n")
    code = (f"import resource, sparsenet as mx\n"
            f"resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30 + 2**31, 2 * 2**30 + 2**31))\n"
            f"try:\n"
            f"    it = mx.io.LibSVMIter(data_libsvm={str(path)!r}, data_shape=(4,), "
            f"batch_size=2**31, cache_bytes={cache_bytes!r})\n"
            f"    next(iter(it))\n"
            f"except mx.base.InvalidArgumentError as e:\n"
            f"    print('refused:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "refused: LibSVMIter: batch_size=2147483648 with round_batch=True" in proc.stdout
    assert "tiny.svm" in proc.stdout and "round_batch=False" in proc.stdout


def test_a_large_padding_is_the_first_rows_cycled(tmp_path):
    # 3 rows padded to a batch of 100,003: the rows cycle from the first (MXNet's round_batch)
    path = tmp_path / "three.svm"
    path.write_text("1 0:1 2:3\n0 1:2\n2 3:4\n")
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(4,), batch_size=100003)
    batch = next(iter(it))
    dense = np.array([[1, 0, 3, 0], [0, 2, 0, 0], [0, 0, 0, 4]], np.float32)
    cycle = np.arange(100003) % 3
    np.testing.assert_array_equal(batch.data[0].asnumpy(), dense[cycle])
    np.testing.assert_array_equal(batch.label[0].asnumpy(), np.float32([1, 0, 2])[cycle])
    assert batch.pad == 100000
    np.testing.assert_array_equal(batch.index, cycle)
