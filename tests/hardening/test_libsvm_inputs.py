"""Issue 19, item 7: a multi-label class id that overflows to inf is a LibSVMFormatError at
path:line:column in both kernels (it was a bare OverflowError)."""
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
    import subprocess
    import sys
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
