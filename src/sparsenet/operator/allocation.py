"""The arrays a custom operator's run allocates, and the checks around the user's writes.

A property's ``infer_shape`` decides the shapes of the outputs the engine
allocates before ``forward`` runs. What it declares is checked before anything
is allocated: outputs that would not fit in the device's memory raise a
:class:`~sparsenet.operator.CustomOpMemoryError` naming the operator, the output
and the shape (not torch's allocator message), and an allocation that fails
anyway (a process memory limit) is reported the same way.

After ``forward`` (and ``backward``), the arrays handed to the operator must still
be the arrays the engine allocated, with the inferred shape, dtype and storage
type: an operator that rebinds ``out_data[0] = value`` instead of writing into it
(``self.assign(out_data[0], req[0], value)`` or ``out_data[0][:] = value``) would
otherwise change the output's shape against ``infer_shape`` (or, in MXNet, leave
the output unwritten without a word).
"""
from ..base import SparsenetError
from ..ndarray.creation import zeros
from ..ndarray.memory import over_memory, zeros_nbytes
from .errors import CustomOpMemoryError, CustomOpValueError

__all__ = ["check_fits", "allocate", "check_written"]


def _describe(what, k, name, shape, dtype, stype):
    label = f"{what} {k}" + (f" '{name}'" if name else "")
    return f"{label} of shape {tuple(shape)} ({dtype}, {stype})"


def check_fits(op_type, what, names, shapes, dtypes, stypes, ctx):
    """Raise :class:`CustomOpMemoryError` when the arrays ``infer_shape`` declares (with
    their dtypes and storage types) need more than the memory of ``ctx``'s device.

    >>> import sparsenet as mx
    >>> check_fits('t', 'output', ['out'], [(2, 3)], ['float32'], ['default'], mx.cpu())
    >>> try:
    ...     check_fits('t', 'output', ['out'], [(2**40, 2**10)], ['float32'], ['default'],
    ...                mx.cpu())
    ... except MemoryError as e:
    ...     print(e)
    custom operator 't': infer_shape declared output 0 'out' of shape (1099511627776, 1024)
    (float32, default): 4503599627370496 bytes, more than the ... bytes of memory of cpu(0);
    check the shapes infer_shape returns
    """
    over = over_memory(list(zip(shapes, dtypes, stypes)), ctx)
    if over is None:
        return
    k, sizes, limit = over
    name = names[k] if k < len(names) else None
    raise CustomOpMemoryError(
        f"custom operator {op_type!r}: infer_shape declared "
        f"{_describe(what, k, name, shapes[k], dtypes[k], stypes[k])}: {sizes[k]} bytes"
        + (f" ({sum(sizes)} bytes for all {what}s)" if len(sizes) > 1 else "")
        + f", more than the {limit} bytes of memory of {ctx}; check the shapes infer_shape "
          f"returns")


def allocate(op_type, what, k, name, shape, dtype, stype, ctx):
    """A zero array for a custom operator's run; an allocation failure raises
    :class:`CustomOpMemoryError` naming the operator, the array and its shape."""
    try:
        return zeros(shape, ctx=ctx, dtype=dtype, stype=stype)
    except SparsenetError:
        raise
    except (RuntimeError, MemoryError) as e:  # torch's allocator (OutOfMemoryError included)
        raise CustomOpMemoryError(
            f"custom operator {op_type!r}: cannot allocate "
            f"{_describe(what, k, name, shape, dtype, stype)} "
            f"({zeros_nbytes(shape, dtype, stype)} bytes) on {ctx}: {e}") from e


def check_written(op_type, where, what, given, allocated, shapes, dtypes, stypes):
    """Raise :class:`CustomOpValueError` when the list ``given`` the user's code received no
    longer holds the arrays ``allocated`` (an entry rebound instead of written into), or one
    of them no longer has the inferred shape, dtype (a name) or storage type.

    ``what`` names the list (``'out_data'``, ``'in_grad'``).

    >>> import sparsenet as mx
    >>> out = [mx.nd.zeros((2,))]
    >>> check_written('t', 'Op.forward', 'out_data', list(out), out, [(2,)], ['float32'],
    ...               ['default'])
    >>> try:
    ...     check_written('t', 'Op.forward', 'out_data', [mx.nd.ones((3,))], out, [(2,)],
    ...                   ['float32'], ['default'])
    ... except ValueError as e:
    ...     print(e)
    custom operator 't': Op.forward replaced out_data[0] (shape (2,), float32, default) with
    a NDArray of shape (3,) instead of writing into it; write with self.assign(out_data[0],
    req[0], value) or out_data[0][:] = value
    """
    if len(given) != len(allocated):
        raise CustomOpValueError(
            f"custom operator {op_type!r}: {where} changed the length of {what} from "
            f"{len(allocated)} to {len(given)}; write into the arrays it holds")
    for k, (g, a) in enumerate(zip(given, allocated)):
        expected = f"shape {tuple(shapes[k])}, {dtypes[k]}, {stypes[k]}"
        if g is not a:
            got = (f"a {type(g).__name__} of shape {tuple(g.shape)}" if hasattr(g, "shape")
                   else f"a {type(g).__name__}")
            raise CustomOpValueError(
                f"custom operator {op_type!r}: {where} replaced {what}[{k}] ({expected}) "
                f"with {got} instead of writing into it; write with "
                f"self.assign({what}[{k}], req[{k}], value) or {what}[{k}][:] = value")
        got = (tuple(a.shape), a.dtype.name, a.stype)
        if got != (tuple(shapes[k]), dtypes[k], stypes[k]):
            raise CustomOpValueError(
                f"custom operator {op_type!r}: after {where}, {what}[{k}] has shape {got[0]}, "
                f"{got[1]}, {got[2]}; infer_shape, infer_type and the storage types declare "
                f"{expected}")
