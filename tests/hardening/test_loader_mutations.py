"""Issue 19: random byte mutations and truncations of valid files make the loaders raise only
their documented error (FileFormatError for arrays, LibSVMFormatError for LibSVM text),
naming the file."""
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import sparsenet as mx
from sparsenet.base import FileFormatError
from sparsenet.io.libsvm.errors import LibSVMFormatError

ARRAYS = {'w': mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3)),
          'b': mx.nd.ones((3,)), 'r': mx.nd.ones((4, 2)).tostype('row_sparse')}


def _mutate(data, patch, at, cut):
    at %= len(data)
    out = data[:at] + patch + data[at + len(patch):]
    return out[:cut % len(out)] if cut % 4 == 0 else out


@pytest.mark.parametrize("fmt", ["mxnet", "sparsenet"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patch=st.binary(min_size=1, max_size=8), at=st.integers(0, 10**6),
       cut=st.integers(0, 10**6))
def test_nd_load_of_mutated_files(tmp_path, fmt, patch, at, cut):
    good = tmp_path / f"good-{fmt}.params"
    if not good.exists():
        mx.nd.save(str(good), ARRAYS, format=fmt)
    path = tmp_path / "m.params"
    path.write_bytes(_mutate(good.read_bytes(), patch, at, cut))
    try:
        out = mx.nd.load(str(path))
    except FileFormatError as e:
        assert str(path) in str(e)
        return
    for v in (out.values() if isinstance(out, dict) else out):  # what loads is valid
        if v.stype == 'default':
            v.asnumpy()  # its values are in the file
        else:
            v.check_format()  # (a sparse array may legitimately have a huge shape)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patch=st.binary(min_size=1, max_size=4), at=st.integers(0, 10**6),
       cut=st.integers(0, 10**6))
def test_load_libsvm_of_mutated_text(tmp_path, patch, at, cut):
    text = b"1 0:1.5 3:2\n0 1:-1 2:0.25\n1 4:3e2\n"
    path = tmp_path / "m.libsvm"
    path.write_bytes(_mutate(text, patch, at, cut))
    try:
        mx.io.load_libsvm(str(path))
    except LibSVMFormatError as e:
        assert os.fspath(path) in str(e)
