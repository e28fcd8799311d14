"""Run a Symbol on given values and compare its outputs and gradients with expected ones.

Values are NumPy arrays (converted to NDArrays of ``dtype``) or NDArrays of
any storage type (used as given), as a list in ``sym.list_arguments()`` order
or a dict by name.

>>> import numpy as np, sparsenet as mx
>>> a, b = mx.sym.var('a'), mx.sym.var('b')
>>> _ = check_symbolic_forward(a * b, [np.array([1., 2.]), np.array([3., 4.])],
...                            [np.array([3., 8.])])
>>> _ = check_symbolic_backward(a * b, [np.array([1., 2.]), np.array([3., 4.])],
...                             [np.array([1., 1.])], [np.array([3., 4.]), np.array([1., 2.])])
"""
from collections import OrderedDict

import numpy as np

from ..base import InvalidArgumentError
from ..context import as_context
from ..ndarray.creation import array
from ..ndarray.ndarray import NDArray
from .compare import _as_numpy, assert_almost_equal
from .devices import default_context
from .random_data import create_sparse_array
from .tolerances import default_dtype

__all__ = ["simple_forward", "check_symbolic_forward", "check_symbolic_backward"]

_FLOAT_TYPES = (np.float16, np.float32, np.float64)


def _check_dtype(dtype, allow_asnumpy=True):
    """``dtype`` as a NumPy scalar type, or ``'asnumpy'`` (keep each array's own dtype)."""
    if allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy":
        return dtype
    try:
        t = np.dtype(dtype).type
    except TypeError:
        t = None
    if t not in _FLOAT_TYPES:
        allowed = "'asnumpy', " if allow_asnumpy else ""
        raise InvalidArgumentError(f"dtype must be {allowed}float16, float32 or float64, got "
                                   f"{dtype!r}")
    return t


def _to_array(value, ctx, dtype):
    """A NumPy array becomes an NDArray of ``dtype`` (its own for 'asnumpy'); NDArrays stay."""
    if isinstance(value, np.ndarray):
        return array(value, ctx=ctx, dtype=value.dtype if dtype == "asnumpy" else dtype)
    return value


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    """``{argument name: NDArray}`` sorted by name, from a list (argument order) or dict.

    >>> import sparsenet as mx
    >>> loc = _parse_location(mx.sym.var('b') * mx.sym.var('a'), [np.ones(2), np.zeros(2)], None)
    >>> list(loc), loc['a'].asnumpy()
    (['a', 'b'], array([0., 0.], dtype=float32))
    """
    dtype = _check_dtype(dtype)
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise InvalidArgumentError(
                f"Symbol arguments and keys of the given location do not match: symbol "
                f"arguments {sorted(names)}, location keys {sorted(location)}")
    elif isinstance(location, (list, tuple)):
        if len(location) != len(names):
            raise InvalidArgumentError(f"location has {len(location)} values for the "
                                       f"{len(names)} symbol arguments {names}")
        location = dict(zip(names, location))
    else:
        raise InvalidArgumentError(f"location must be a list or dict of arrays, got "
                                   f"{type(location).__name__}")
    return OrderedDict((k, _to_array(location[k], ctx, dtype)) for k in sorted(location))


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """``{auxiliary state name: NDArray}`` from a list or dict (None stays None).

    >>> import sparsenet as mx
    >>> _parse_aux_states(mx.sym.var('a'), [], None)
    {}
    """
    dtype = _check_dtype(dtype)
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise InvalidArgumentError(
                f"Symbol aux_states names and given aux_states do not match: symbol "
                f"auxiliary states {sorted(names)}, given {sorted(aux_states)}")
    elif isinstance(aux_states, (list, tuple)):
        if len(aux_states) != len(names):
            raise InvalidArgumentError(f"aux_states has {len(aux_states)} values for the "
                                       f"{len(names)} auxiliary states {names}")
        aux_states = dict(zip(names, aux_states))
    else:
        raise InvalidArgumentError(f"aux_states must be a list or dict of arrays, got "
                                   f"{type(aux_states).__name__}")
    return {k: _to_array(np.asarray(v) if not isinstance(v, NDArray) else v, ctx, dtype)
            for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Run ``sym`` on NumPy inputs given by argument name; NumPy output(s) back.

    One output: a NumPy array; several: a list of them.

    >>> import sparsenet as mx
    >>> simple_forward(mx.sym.var('x') * 2, x=np.array([1.0, 2.0]))
    array([2., 4.], dtype=float32)
    """
    ctx = as_context(ctx) if ctx else default_context()
    exe = sym.bind(ctx, args={k: array(v, ctx=ctx) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Assert that the outputs of ``sym`` at ``location`` equal ``expected`` (within tolerance).

    Parameters
    ----------
    sym : Symbol
    location : list or dict of arrays
        A value for every argument.
    expected : list or dict of arrays
        One array per output (``sym.list_outputs()`` order or by output name).
    rtol, atol : None, float or dict of dtype to float
    aux_states : list or dict, optional
    ctx : Context, optional
    equal_nan : bool
    dtype : float16, float32, float64 or 'asnumpy'
        dtype of the NDArrays made from NumPy values.

    Returns
    -------
    list of NDArray
        The outputs.

    Raises
    ------
    AssertionError
        Naming the output (``EXPECTED_<output>``, ``FORWARD_<output>``) and
        the worst mismatch.
    """
    dtype = _check_dtype(dtype)
    ctx = as_context(ctx) if ctx else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    outputs_names = sym.list_outputs()
    if isinstance(expected, dict):
        expected = [expected[k] for k in outputs_names]
    exe = sym.bind(ctx=ctx, args=location, grad_req="null", aux_states=aux_states)
    exe.forward(is_train=False)
    for name, expect, output in zip(outputs_names, expected, exe.outputs):
        assert_almost_equal(expect, output, rtol, atol,
                            (f"EXPECTED_{name}", f"FORWARD_{name}"), equal_nan=equal_nan)
    return exe.outputs


def _as_arrays(out_grads, ctx, dtype, output_names):
    """Head gradients as a list of NDArrays in output order (None stays None)."""
    if out_grads is None:
        return None
    if isinstance(out_grads, dict):
        out_grads = [out_grads[name] for name in output_names]
    elif isinstance(out_grads, (np.ndarray, NDArray)):
        out_grads = [out_grads]
    return [_to_array(g, ctx, dtype) for g in out_grads]


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Assert that the argument gradients of ``sym`` at ``location`` equal ``expected``.

    The gradient buffers start from random values, so ``grad_req='add'`` is
    checked against ``buffer - initial value`` and ``'null'`` against the
    untouched initial value.

    Parameters
    ----------
    sym : Symbol
    location : list or dict of arrays
        A value for every argument.
    out_grads : None, list or dict of arrays
        Gradients with respect to the outputs.
    expected : list or dict of arrays
        Expected gradients (argument order, or by argument name for a subset).
    rtol, atol : None, float or dict of dtype to float
    aux_states : list or dict, optional
    grad_req : str, list or dict
        'write', 'add' or 'null' (per argument).
    ctx : Context, optional
    grad_stypes : dict of str to str, optional
        Storage type of each gradient buffer (a list is ignored, as MXNet 1.9.1 does).
    equal_nan : bool
    dtype : float16, float32, float64 or 'asnumpy'

    Returns
    -------
    dict of str to NDArray
        The gradient buffers.
    """
    dtype = _check_dtype(dtype)
    ctx = as_context(ctx) if ctx else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    names = sym.list_arguments()
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    unknown = sorted(set(expected) - set(names))
    if unknown:
        raise InvalidArgumentError(f"expected gradients for {unknown}, which are not arguments "
                                   f"of the symbol {names}")
    # dirty the gradient buffers deterministically
    initial = {k: np.random.normal(size=np.shape(v)) for k, v in sorted(expected.items())}
    grads = {}
    for k, v in initial.items():
        # MXNet 1.9.1 looks names up with ``k in grad_stypes``: a list names no argument
        stype = grad_stypes.get(k) if isinstance(grad_stypes, dict) else None
        if stype not in (None, "default"):
            grads[k] = create_sparse_array(v.shape, stype, density=0.0)
        else:
            own = np.asarray(_as_numpy(expected[k])).dtype
            grads[k] = array(v, ctx=ctx, dtype=own if dtype == "asnumpy" else dtype)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    exe = sym.bind(ctx=ctx, args=location, args_grad=grads, aux_states=aux_states,
                   grad_req=grad_req)
    exe.forward(is_train=True)
    exe.backward(_as_arrays(out_grads, ctx, dtype, sym.list_outputs()))
    for name in expected:
        req = grad_req.get(name, "null")
        label = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        if req == "write":
            assert_almost_equal(expected[name], grads[name], rtol, atol, label,
                                equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(expected[name], _as_numpy(grads[name]) - initial[name], rtol,
                                atol, label, equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(initial[name], grads[name], rtol, atol, label,
                                equal_nan=equal_nan)
        else:
            raise InvalidArgumentError(f"Invalid grad_req {req!r} for argument {name!r}; "
                                       f"expected 'write', 'add' or 'null'")
    return grads
