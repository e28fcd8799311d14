"""Run one Symbol under several contexts/dtypes and compare; time a Symbol.

>>> import numpy as np, sparsenet as mx
>>> x = mx.sym.var('x')
>>> ctx_list = [{'ctx': mx.cpu(0), 'x': (2, 3), 'type_dict': {'x': np.float64}},
...             {'ctx': mx.cpu(0), 'x': (2, 3), 'type_dict': {'x': np.float32}}]
>>> sorted(check_consistency(mx.sym.sin(x, name='s'), ctx_list))
['s_output', 'x']
"""
import time
import traceback

import numpy as np

from ..base import InvalidArgumentError
from ..context import as_context
from ..ndarray.creation import array
from ..ndarray.ndarray import waitall
from ..symbol.symbol import Symbol
from .compare import assert_almost_equal
from .devices import default_context
from .tolerances import get_tols

__all__ = ["check_speed", "check_consistency"]


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole",  # noqa: N803
                **kwargs):
    """Seconds per run of ``sym``: forward and backward (``typ='whole'``) or forward only.

    Parameters
    ----------
    sym : Symbol
    location : dict of str to numpy.ndarray, optional
        Argument values; random normal values of the shapes in ``kwargs`` when None.
    ctx : Context, optional
    N : int
        Timed repetitions (after one warm-up run).
    grad_req : str, list or dict, optional
        'write' by default.
    typ : {'whole', 'forward'}
    **kwargs
        Argument shapes, when ``location`` is None.

    Examples
    --------
    >>> import sparsenet as mx
    >>> check_speed(mx.sym.var('x') * 2, N=2, x=(4, 4)) > 0
    True
    """
    if typ not in ("whole", "forward"):
        raise InvalidArgumentError(f'typ can only be "whole" or "forward", got {typ!r}')
    ctx = as_context(ctx) if ctx else default_context()
    grad_req = "write" if grad_req is None else grad_req
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0)
                    for k, arr in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise InvalidArgumentError(f"location must be a dict name -> numpy array, got "
                                       f"{type(location).__name__}")
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx,
                              **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = np.asarray(value).astype(exe.arg_dict[name].dtype)
    train = typ == "whole"

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    step()
    for out in exe.outputs:
        out.wait_to_read()
    tic = time.time()
    for _ in range(N):
        step()
    waitall()
    return (time.time() - tic) / N


def _least_precise(dt1, dt2):
    """The dtype with fewer bytes (``dt1`` on ties); ``dt1`` when ``dt2`` is None."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def _report(kind, error, raise_on_err):
    print(kind)
    traceback.print_exc()
    if raise_on_err:
        raise error
    print(str(error))


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Assert that ``sym`` gives the same outputs and gradients under every entry of ``ctx_list``.

    Every entry is bound with ``simple_bind(grad_req=grad_req, **entry)``
    (``'ctx'``, argument shapes, ``'type_dict'``, ``'stype_dict'``) and fed
    the same random inputs; the entry with the most precise output dtype is
    the ground truth unless ``ground_truth`` is given. Outputs are compared
    after ``forward(is_train=False)``; then, unless ``grad_req`` is 'null',
    outputs and gradients after a training forward and a backward pass with
    the first executor's outputs as head gradients.

    Parameters
    ----------
    sym : Symbol or list of Symbol
        One symbol, or one per entry (same arguments and output names).
    ctx_list : list of dict
        At least two entries.
    scale : float
        Spread of the random inputs.
    grad_req : str, list or dict
    arg_params, aux_params : dict of str to numpy.ndarray, optional
        Fixed inputs (random ones are filled in for the others).
    rtol, atol : None, float or dict of dtype to float
    raise_on_err : bool
        Raise the first AssertionError (else print and go on).
    ground_truth : dict of str to array, optional
        Expected outputs and gradients by name.
    equal_nan : bool
    use_uniform : bool
        Inputs from U(-0.92 scale, 0.92 scale) instead of N(0, scale).
    rand_type : dtype
        dtype the random inputs are drawn in.

    Returns
    -------
    dict
        The ground truth: output and gradient arrays by name.
    """
    if len(ctx_list) < 2:
        raise InvalidArgumentError(f"check_consistency needs at least two entries in ctx_list, "
                                   f"got {len(ctx_list)}")
    syms = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    if len(syms) != len(ctx_list):
        raise InvalidArgumentError(f"{len(syms)} symbols for {len(ctx_list)} ctx_list entries")
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    for s in syms:
        if s.list_arguments() != arg_names or s.list_outputs() != output_names:
            raise InvalidArgumentError(
                f"the symbols differ: arguments {s.list_arguments()} / outputs "
                f"{s.list_outputs()} against {arg_names} / {output_names}")
    exes = [s.simple_bind(grad_req=grad_req, **entry) for s, entry in zip(syms, ctx_list)]

    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    for name in sorted(exes[0].arg_dict):  # deterministic order, for reproducibility
        if name not in arg_params:
            shape = exes[0].arg_dict[name].shape
            if use_uniform:
                value = np.random.uniform(low=-0.92 * scale, high=0.92 * scale, size=shape)
            else:
                value = np.random.normal(size=shape, scale=scale)
            arg_params[name] = value.astype(rand_type)
    for name in exes[0].aux_dict:
        aux_params.setdefault(name, 0)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0

    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    gt_idx = max(range(len(exes)), key=lambda i: (dtypes[i].itemsize, -i))
    gt = ground_truth
    if gt is None:
        gt = exes[gt_idx].output_dict.copy()
        if grad_req != "null":
            gt.update(exes[gt_idx].grad_dict)

    for exe in exes:
        exe.forward(is_train=False)
    for i, exe in enumerate(exes):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names, exe.outputs):
            try:
                assert_almost_equal(arr, gt[name], rtol=rtol, atol=atol, equal_nan=equal_nan)
            except AssertionError as e:
                _report(f"Predict Err: ctx {i} vs ctx {gt_idx} at {name}", e, raise_on_err)

    if grad_req == "null":
        return gt
    for exe in exes:
        exe.forward(is_train=True)
    least = [out.dtype for out in exes[0].outputs]
    for exe in exes:
        least = [_least_precise(out.dtype, dt) for out, dt in zip(exe.outputs, least)]
    golden = [out.astype(dt).asnumpy() for out, dt in zip(exes[0].outputs, least)]
    for exe in exes:
        exe.backward([array(g, ctx=out.context, dtype=out.dtype).tostype(out.stype)
                      for g, out in zip(golden, exe.outputs)])
    for i, exe in enumerate(exes):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
            expected = gt[name]
            if expected is None:
                if arr is not None:
                    # builtin: an assertion helper fails with AssertionError, as numpy.testing does
                    raise AssertionError(f"ctx {i} computed a gradient for {name!r}, the "
                                         f"ground truth has none")
                continue
            try:
                rt, at = rtol, atol
                # a float16 executor's float32 gradients get float16 tolerances
                arr_dt = _least_precise(arr.dtype, dtypes[i])
                gt_dt = _least_precise(expected.dtype, dtypes[gt_idx])
                if arr_dt != arr.dtype or gt_dt != expected.dtype:
                    rt, at = get_tols(arr.astype(arr_dt), expected.astype(gt_dt), rtol, atol)
                assert_almost_equal(arr, expected, rtol=rt, atol=at, equal_nan=equal_nan)
            except AssertionError as e:
                _report(f"Train Err: {np.dtype(arr.dtype).name} {arr.context} ctx {i} vs "
                        f"{np.dtype(expected.dtype).name} "
                        f"{getattr(expected, 'context', 'numpy')} ctx {gt_idx} at {name}",
                        e, raise_on_err)
    return gt
