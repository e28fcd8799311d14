"""Check a Symbol's backward pass against central finite differences.

:func:`check_numeric_gradient` multiplies the symbol's output by a fixed
random projection, makes it a loss, and compares the executor's gradients
with :func:`numeric_grad`'s ``(f(x + eps/2) - f(x - eps/2)) / eps`` for every
element of every checked argument. Arguments and gradient buffers may be
sparse (``stype`` of the bound arrays, ``grad_stype_dict``).

>>> import numpy as np, sparsenet as mx
>>> x = mx.sym.var('x')
>>> check_numeric_gradient(mx.sym.sin(x) * x, [np.array([0.5, 1.0, 2.0])])
"""
import numpy as np

from ..base import InvalidArgumentError
from ..context import as_context
from ..ndarray.creation import array, zeros
from ..ndarray.stype import STYPES
from ..ops.cast import cast_storage
from ..symbol.op import SYMBOL_OPS
from ..symbol.symbol import Variable
from .compare import _as_numpy, assert_almost_equal
from .devices import default_context
from .symbolic import _check_dtype, _parse_aux_states, _parse_location
from .tolerances import default_dtype, default_numeric_eps, get_tolerance

__all__ = ["numeric_grad", "check_numeric_gradient"]


def _as_stype(values, stype, dtype, ctx):
    return cast_storage(array(values, ctx=ctx, dtype=dtype), stype=stype)


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """Finite-difference gradient of the sum of the executor's first output.

    For each float argument in ``location`` and each of its elements, the
    element is moved by ``+eps/2`` and ``-eps/2`` (the argument keeps its
    storage type) and ``sum(out+ - out-) / eps`` is recorded. Arguments are
    restored afterwards.

    Parameters
    ----------
    executor : Executor
    location : dict of str to numpy.ndarray
        The point; its arrays are made C-contiguous in place.
    aux_states : dict of str to numpy.ndarray, optional
    eps : float
    use_forward_train : bool
        Run ``forward(is_train=...)`` with this flag.
    dtype : float16, float32 or float64

    Returns
    -------
    dict of str to numpy.ndarray

    Examples
    --------
    >>> import sparsenet as mx
    >>> exe = (mx.sym.var('a') * mx.sym.var('b')).simple_bind(mx.cpu(), a=(2,), b=(2,))
    >>> loc = {'a': np.array([1., 2.]), 'b': np.array([3., 4.])}
    >>> numeric_grad(exe, loc, eps=1e-2)['b']
    array([1.0000229, 2.0000458], dtype=float32)
    """
    dtype = _check_dtype(dtype, allow_asnumpy=False)
    args = executor.arg_dict
    aux = executor.aux_dict
    approx = {k: np.zeros(np.shape(v), dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        if args[k].stype == "default":
            args[k][:] = _as_stype(v, "default", dtype, args[k].context)
    for k in location:
        location[k] = np.asarray(location[k], order="C")

    def run():
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        stype, dev = args[k].stype, args[k].context
        old = v.copy()
        flat, out = v.reshape(-1), approx[k].reshape(-1)
        # the argument's own ``[:] =`` casts to its storage type: one conversion per
        # step (building an array and casting it first converted twice)
        for i in range(flat.size):
            flat[i] += eps / 2.0
            args[k][:] = v.astype(dtype, copy=False)
            for key, val in (aux_states or {}).items():
                aux[key][:] = val
            f_plus = run()
            flat[i] -= eps
            args[k][:] = v.astype(dtype, copy=False)
            for key, val in (aux_states or {}).items():
                aux[key][:] = _as_stype(val, aux[key].stype, dtype, aux[key].context)
            f_minus = run()
            out[i] = (f_plus - f_minus).sum() / eps
            flat[i] = old.reshape(-1)[i]
        args[k][:] = _as_stype(old, stype, dtype, dev)
    return approx


def _random_projection(shape):
    """Projection weights in [0.1, 1.1): not too small, or the finite differences lose precision."""
    return np.random.rand(*shape) + 0.1


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Assert that the symbolic gradients of ``sym`` match finite differences.

    Parameters
    ----------
    sym : Symbol
        One output.
    location : list or dict of arrays
        A value for every argument (NumPy arrays or NDArrays of any storage type).
    aux_states : list or dict, optional
    numeric_eps : None, float or dict of dtype to float
        Finite-difference step; by default 2**-6 / 2**-9 / 2**-14 for
        float16 / float32 / float64. float16 and float32 need at least 1e-5.
    rtol, atol : None, float or dict of dtype to float
    grad_nodes : None, list or dict
        Arguments to check (all by default); a dict gives each its grad_req.
    use_forward_train : bool
        Finite differences with ``forward(is_train=...)``.
    ctx : Context, optional
    grad_stype_dict : dict of str to str, optional
        Storage type of each gradient buffer.
    dtype : float16, float32 or float64

    Raises
    ------
    AssertionError
        Naming ``NUMERICAL_<arg>`` and ``BACKWARD_<arg>`` and the worst mismatch.
    """
    dtype = _check_dtype(dtype, allow_asnumpy=False)
    ctx = as_context(ctx) if ctx else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
        grad_nodes = list(grad_nodes)
    else:
        raise InvalidArgumentError(f"grad_nodes must be None, a list of argument names or a "
                                   f"dict name -> grad_req, got {type(grad_nodes).__name__}")
    unknown = [k for k in grad_nodes if k not in location]
    if unknown:
        raise InvalidArgumentError(f"grad_nodes {unknown} are not arguments of the symbol "
                                   f"{sym.list_arguments()}")

    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    if out_shapes is None or len(out_shapes) != 1:
        raise InvalidArgumentError(f"check_numeric_gradient needs a symbol with one output of "
                                   f"known shape, got outputs {sym.list_outputs()}")
    proj = Variable("__random_proj")
    loss = SYMBOL_OPS["make_loss"](sym * proj)
    location = dict(location)
    location["__random_proj"] = array(_random_projection(out_shapes[0]), ctx=ctx, dtype=dtype)
    grads_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    grads_npy["__random_proj"] = np.random.normal(0, 0.01, size=out_shapes[0])
    grads = {k: array(v, ctx=ctx, dtype=dtype) for k, v in grads_npy.items()}
    for k, stype in (grad_stype_dict or {}).items():
        if k in grads and stype in STYPES and stype != "default":
            # an empty sparse buffer: a gradient expected to be zero stays unwritten
            grads[k] = zeros(grads[k].shape, ctx, dtype, stype)

    exe = loss.bind(ctx, grad_req=grad_req, args=location, args_grad=grads,
                    aux_states=aux_states)
    exe.forward(is_train=True)
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16) and eps < 1e-5:
        raise InvalidArgumentError(f"numeric_eps {eps} is too small for {np.dtype(dtype).name} "
                                   f"finite differences; use at least 1e-5 or dtype=float64")
    exe.backward()
    symbolic = exe.grad_dict
    numeric = numeric_grad(exe, location_npy, aux_npy, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        label = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        req = grad_req[name]
        if req == "write":
            assert_almost_equal(numeric[name], symbolic[name], rtol, atol, label)
        elif req == "add":
            assert_almost_equal(numeric[name], _as_numpy(symbolic[name]) - grads_npy[name],
                                rtol, atol, label)
        elif req == "null":
            assert_almost_equal(grads_npy[name], symbolic[name], rtol, atol, label)
        else:
            raise InvalidArgumentError(f"Invalid grad_req {req!r} for argument {name!r}; "
                                       f"expected 'write', 'add' or 'null'")
