"""The operator registry: fallback policy, warnings, counters, env switches, docs table."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import StorageFallbackError, StorageFallbackWarning
from sparsenet.ops.registry import OPERATORS, get_op, list_ops, stype_table


def _rsp():
    return mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))


def test_error_policy_raises_with_a_clear_message():
    with mx.config.storage_fallback("error"):
        with pytest.raises(StorageFallbackError, match=r"operator 'exp' has no kernel for input "
                                                       r"storage types \(row_sparse\)"):
            mx.nd.exp(_rsp())


def test_warn_policy_warns_once_per_signature_and_counts():
    mx.config.reset_fallback_counts()
    with mx.config.storage_fallback("warn"):
        with pytest.warns(StorageFallbackWarning) as rec:
            mx.nd.exp(_rsp())
            mx.nd.exp(_rsp())
            mx.nd.exp(_rsp().tostype("csr"))
        assert len(rec) == 2  # (row_sparse) once, (csr) once
        assert "test_registry.py" in rec[0].filename  # points at the caller's line
    counts = mx.config.fallback_counts()
    assert counts[("exp", ("row_sparse",))] == 2 and counts[("exp", ("csr",))] == 1
    report = mx.config.fallback_report()
    assert "exp(row_sparse)" in report and report.index("row_sparse") < report.index("(csr)")


def test_silent_policy_still_counts():
    mx.config.reset_fallback_counts()
    with mx.config.storage_fallback("silent"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = mx.nd.exp(_rsp())
    assert out.stype == "default"
    assert mx.config.fallback_counts() == {("exp", ("row_sparse",)): 1}


def test_set_storage_fallback_validates():
    with pytest.raises(ValueError, match="must be one of"):
        mx.config.set_storage_fallback("loud")
    old = mx.config.set_storage_fallback("silent")
    try:
        assert mx.config.get_storage_fallback() == "silent"
    finally:
        mx.config.set_storage_fallback(old)


@pytest.mark.parametrize("env,expected", [
    ({"SPARSENET_STORAGE_FALLBACK": "error"}, "error"),
    ({"SPARSENET_STORAGE_FALLBACK": "silent"}, "silent"),
    ({"MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"}, "silent"),
    ({}, "warn"),
])
def test_policy_from_environment(env, expected):
    full = {k: v for k, v in os.environ.items()
            if k not in ("SPARSENET_STORAGE_FALLBACK", "MXNET_STORAGE_FALLBACK_LOG_VERBOSE")}
    full.update(env)
    full["PYTHONPATH"] = os.pathsep.join(sys.path)
    out = subprocess.run([sys.executable, "-c", "import sparsenet as mx; "
                          "print(mx.config.get_storage_fallback())"],
                         env=full, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected


def test_bad_policy_in_environment_is_an_error():
    env = dict(os.environ, SPARSENET_STORAGE_FALLBACK="loud",
               PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", "import sparsenet"], env=env,
                         capture_output=True, text=True)
    assert out.returncode != 0 and "SPARSENET_STORAGE_FALLBACK='loud'" in out.stderr


def test_forward_stype_forces_the_output():
    x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 2))
    w = mx.nd.ones((2, 2))
    out = mx.nd.dot(x, w, forward_stype="row_sparse")
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.asnumpy(), [[1, 1], [2, 2]])
    assert get_op("dot").infer_storage(("csr", "default"), {"forward_stype": "csr"}) == \
        ("csr", True)


def test_positional_parameters_and_unknown_names():
    a = mx.nd.array([-2.0, 0.5, 3.0])
    np.testing.assert_array_equal(mx.nd.clip(a, -1, 1).asnumpy(), [-1, 0.5, 1])
    np.testing.assert_array_equal(mx.nd.clip(a, a_min=0, a_max=2).asnumpy(), [0, 0.5, 2])
    with pytest.raises(TypeError, match=r"multiple values for 'a_min'"):
        mx.nd.clip(a, 0, a_min=1)
    with pytest.raises(TypeError, match=r"unexpected parameter\(s\) \['lo'\]"):
        mx.nd.clip(a, lo=0)
    assert mx.nd.sum(a, name="ignored").asscalar() == 1.5  # MXNet's name= is accepted


def test_docstrings_carry_the_storage_table():
    doc = mx.nd.dot.__doc__
    assert "Storage types" in doc and "| csr, dns | rsp | transpose_a=True, transpose_b=False |" in doc
    assert mx.nd.dot.__name__ == "dot"


def test_registry_lists_and_table_is_current():
    names = list_ops()
    assert "dot" in names and "cast_storage" in names and len(names) == len(set(names))
    assert all(n in OPERATORS for n in names)
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "stype_table.md")
    with open(path) as f:
        assert f.read() == stype_table(), \
            "docs/stype_table.md is stale: run python tools/gen_stype_table.py"


def test_dense_calls_skip_dispatch_with_the_same_results():
    """Operators with no rule row for dense inputs run their dense definition directly on
    dense arrays; the result equals the dispatching path's, and anything else (sparse
    inputs, ``out=``, positional parameters) still dispatches."""
    op = get_op("broadcast_add")
    assert op._dense_only
    a, b = mx.nd.array([[1.0], [2.0]]), mx.nd.array([10.0, 20.0])
    fast = op(a, b)
    slow = op._dispatch([a, b], op.bind_params({}))
    assert type(fast) is type(slow)
    np.testing.assert_array_equal(fast.asnumpy(), slow.asnumpy())
    np.testing.assert_array_equal(fast.asnumpy(), [[11, 21], [12, 22]])
    out = mx.nd.zeros((2, 2))
    assert op(a, b, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), fast.asnumpy())
    # a 0-d result becomes shape (1,), as on the dispatching path
    assert mx.nd.sum(mx.nd.ones((2, 2))).shape == (1,)
    # an operator with a rule for dense inputs keeps dispatching to it
    assert not get_op("take")._dense_only and not get_op("cast_storage")._dense_only
    with pytest.raises(TypeError, match=r"unexpected parameter\(s\) \['bogus'\]"):
        mx.nd.sigmoid(a, bogus=1)
