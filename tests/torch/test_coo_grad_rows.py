"""A torch sparse COO tensor whose row ids lie outside its shape.

torch does not check a COO tensor's indices unless asked, so a crafted gradient (or array)
reaches sparsenet with a row id past the parameter's rows. Before: the torch optimizers
(``sparsenet.torch.optim``) raised a bare ``IndexError`` (native kernels) or ``RuntimeError``
(``SPARSENET_NATIVE_ROWS=0``), and ``mx.nd.from_torch`` built a row_sparse array holding the
bad row, or aborted the process (``free(): invalid pointer``) for a 2-D COO matrix. Now each
raises ``IndexOutOfRangeError`` (an ``MXNetError`` and an ``IndexError``) naming the id and
the bound, before anything is written.
"""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import sparsenet as mx
import sparsenet.torch.optim as sopt
from sparsenet.base import IndexOutOfRangeError
from sparsenet.ops import row_kernels


def _coo(ids, values, shape):
    return torch.sparse_coo_tensor(torch.tensor(ids), values, shape, check_invariants=False)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("name,kwargs", [("SGD", {}), ("SGD", {"momentum": 0.9}),
                                         ("Adam", {}), ("Adagrad", {})])
@pytest.mark.parametrize("bad", [5, 3, -1])
def test_an_out_of_range_gradient_row_is_an_index_out_of_range_error(name, kwargs, bad, native,
                                                                     monkeypatch):
    monkeypatch.setattr(row_kernels, "ENABLED", native)
    p = torch.nn.Parameter(torch.ones(3, 2))
    opt = getattr(sopt, name)([p], lr=0.1, **kwargs)
    p.grad = _coo([[0, bad]], torch.ones(2, 2), (3, 2))
    with pytest.raises(IndexOutOfRangeError, match=rf"sparse COO gradient of a parameter of "
                                                   rf"shape \(3, 2\): row id {bad} at position "
                                                   rf"\d is out of range for 3 rows \(expected "
                                                   rf"0 <= row < 3\)"):
        opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), np.ones((3, 2)))  # nothing written


def test_in_range_rows_still_train():
    p = torch.nn.Parameter(torch.ones(3, 2))
    opt = sopt.SGD([p], lr=0.5)
    p.grad = _coo([[2, 0, 2]], torch.ones(3, 2), (3, 2))
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [[0.5, 0.5], [1, 1], [0, 0]])


@pytest.mark.parametrize("ids,values", [
    ("[[0, 5]]", "torch.ones(2, 2)"),            # row_sparse (sparse_dim=1)
    ("[[0, -1]]", "torch.ones(2, 2)"),
    ("[[0, 1], [1, 7]]", "torch.ones(2)"),        # 2-D COO -> CSR: the column
    ("[[-1, 0], [0, 1]]", "torch.ones(2)"),       # 2-D COO -> CSR: a negative row
])
def test_from_torch_refuses_out_of_range_coo_ids(ids, values):
    # in a child process: before, glibc aborted the process in coalesce for a 2-D COO
    # (free(): invalid pointer), and a row_sparse array was built holding the bad row
    code = textwrap.dedent(f"""
        import torch, sparsenet as mx
        g = torch.sparse_coo_tensor(torch.tensor({ids}), {values}, (3, 2),
                                    check_invariants=False)
        try:
            mx.nd.from_torch(g)
        except mx.base.IndexOutOfRangeError as e:
            print(e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.fullmatch(r"from_torch: COO index -?\d+ of dimension \d \(entry \d\) is out of "
                        r"range for shape \(3, 2\) \(expected 0 <= index < [32]\)",
                        out.stdout.strip()), out.stdout
