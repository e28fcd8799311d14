"""DataDesc, DataBatch and DataIter: MXNet's protocol."""
import pickle

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.io import DataBatch, DataDesc, DataIter


def test_datadesc_is_a_named_tuple_with_dtype_and_layout():
    d = DataDesc("data", [4, 5], np.float64, "NTC")
    assert d == ("data", (4, 5)) and d.name == "data" and d.shape == (4, 5)
    assert d.dtype is np.float64 and d.layout == "NTC"
    assert repr(d) == "DataDesc[data,(4, 5),<class 'numpy.float64'>,NTC]"
    assert DataDesc.get_batch_axis(None) == 0 and DataDesc.get_batch_axis("TNC") == 1
    assert pickle.loads(pickle.dumps(d)).layout == "NTC"
    assert DataDesc.get_list([("a", (1,))], None)[0].dtype is np.float32


def test_databatch_fields_and_checks():
    b = DataBatch([mx.nd.ones((2, 2))], pad=1, index=np.array([3, 4]), bucket_key=7)
    assert b.label is None and b.pad == 1 and b.bucket_key == 7
    assert str(b) == "DataBatch: data shapes: [(2, 2)] label shapes: None"
    with pytest.raises(TypeError, match="list of NDArrays"):
        DataBatch(mx.nd.ones((2,)))


def test_dataiter_protocol():
    class Three(DataIter):
        def __init__(self):
            super().__init__(batch_size=1)
            self.i = 0

        def iter_next(self):
            self.i += 1
            return self.i <= 3

        def getdata(self):
            return [mx.nd.array([self.i])]

    it = Three()
    assert iter(it) is it
    assert [b.data[0].asnumpy().tolist() for b in it] == [[1], [2], [3]]
    assert list(it) == []  # no auto-reset
    with pytest.raises(NotImplementedError, match="must implement iter_next"):
        DataIter().next()
