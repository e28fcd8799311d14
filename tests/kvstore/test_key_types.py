"""A store takes int keys or str keys, not both (MXNet's test_invalid_pull: init, push, pull and
row_sparse_pull with the other type raise MXNetError)."""
import numpy as np
import pytest

import sparsenet as mx


@pytest.mark.parametrize("first,other", [(3, "a"), ("a", 3)])
def test_the_other_key_type_is_refused_by_every_method(first, other):
    kv = mx.kv.create("local")
    kv.init(first, mx.nd.ones((2, 3)))
    dense, rsp = mx.nd.ones((2, 3)) * 2, (mx.nd.ones((2, 3)) * 2).tostype("row_sparse")
    calls = [lambda: kv.init(other, dense), lambda: kv.push(other, dense),
             lambda: kv.pull(other, out=dense),
             lambda: kv.row_sparse_pull(other, out=rsp, row_ids=mx.nd.array([1])),
             lambda: kv.init([other], [dense])]
    for call in calls:
        with pytest.raises(mx.MXNetError, match="store takes int keys or str keys") as info:
            call()
        assert isinstance(info.value, TypeError)
    np.testing.assert_array_equal(dense.asnumpy(), np.full((2, 3), 2.0))  # nothing written
    out = mx.nd.zeros((2, 3))
    kv.pull(first, out=out)  # the store still serves its own keys
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3)))
