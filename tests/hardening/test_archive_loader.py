"""Issue 19, item 5 (arrays): a crafted sparsenet archive raises FileFormatError naming the
file and the key, never a bare TypeError/AttributeError/IndexError or an invalid array."""
import copy

import pytest
import torch

import sparsenet as mx
from sparsenet.base import FileFormatError
from sparsenet.ndarray import serialization

GOOD = serialization._payload({'a': mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 2)),
                               'b': mx.nd.ones((2,))})

CASES = {
    "version as text": (lambda p: p.__setitem__('version', "9"), "format version '9'"),
    "arrays not a list": (lambda p: p.__setitem__('arrays', 5), "'arrays' is a int"),
    "parts as text": (lambda p: p['arrays'][0].__setitem__('parts', "ab"),
                      "key 'a': a csr array is stored as 3 tensor"),
    "int8 indices": (lambda p: p['arrays'][0]['parts'].__setitem__(
        1, torch.tensor([0], dtype=torch.int8)), "key 'a': csr indices must be int32 or int64"),
    "bool indptr": (lambda p: p['arrays'][0]['parts'].__setitem__(2, torch.tensor([0, 1]).bool()),
                    "key 'a': csr indices must be int32 or int64, got torch.bool"),
    "non-string keys": (lambda p: p.__setitem__('keys', [1, 2]), "keys are not a list of str"),
    "duplicate keys": (lambda p: p.__setitem__('keys', ['a', 'a']), "'a' appears twice"),
    "meta tensor": (lambda p: p['arrays'][1]['parts'].__setitem__(0, torch.empty(2, device='meta')),
                    "key 'b': a stored tensor is on meta"),
    "negative shape": (lambda p: p['arrays'][1].__setitem__('shape', [-2]),
                       "key 'b': the shape"),
    "record not a dict": (lambda p: p['arrays'].__setitem__(0, 7), "key 'a': malformed"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crafted_archives_raise_file_format_error(tmp_path, name):
    change, where = CASES[name]
    payload = copy.deepcopy(GOOD)
    change(payload)
    path = tmp_path / "x.params"
    torch.save(payload, path)
    with pytest.raises(FileFormatError, match=where) as err:
        mx.nd.load(str(path))
    assert str(path) in str(err.value)


def test_the_untouched_archive_loads(tmp_path):
    path = tmp_path / "x.params"
    torch.save(copy.deepcopy(GOOD), path)
    assert sorted(mx.nd.load(str(path))) == ['a', 'b']
