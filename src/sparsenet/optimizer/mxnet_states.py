"""MXNet 1.x ``.states`` files, read through an allow-list unpickler: no code in the file runs.

``Trainer.save_states`` and ``Module.save_optimizer_states`` in MXNet 1.x write a pickle of the
updater's states (a dict ``index -> NDArray | tuple | None``) and, from the Trainer, the optimizer
object. This module unpickles such a file with :class:`pickle.Unpickler` whose ``find_class``
knows only:

* MXNet's NDArray classes (``mxnet.ndarray.ndarray.NDArray``, ``mxnet.ndarray.sparse.CSRNDArray``,
  ``RowSparseNDArray``), rebuilt from their raw-bytes state by :mod:`sparsenet.ndarray.mxnet_format`;
* the optimizers and learning-rate schedulers MXNet defines, mapped to sparsenet's attribute by
  attribute;
* ``builtins.bytearray`` (the arrays' raw bytes).

Any other global raises :class:`~sparsenet.base.FileFormatError` naming it.

>>> import pickle
>>> loads(pickle.dumps({0: None}))
{0: None}
>>> import os
>>> loads(pickle.dumps(os.system), 'evil.states')
Traceback (most recent call last):
...
sparsenet.base.FileFormatError: evil.states: the pickle asks for the global 'posix.system', which an MXNet .states file never holds; refused, nothing in the file was run
"""
import io
import pickle
import pickletools

from .. import lr_scheduler as _lr_scheduler
from ..base import FileFormatError
from ..ndarray import mxnet_format
from .optimizer import Optimizer

__all__ = ["loads", "is_mxnet_states"]

_NDARRAY_CLASSES = {("mxnet.ndarray.ndarray", "NDArray"), ("mxnet.ndarray.sparse", "CSRNDArray"),
                    ("mxnet.ndarray.sparse", "RowSparseNDArray"),
                    ("mxnet.ndarray.sparse", "BaseSparseNDArray"),
                    ("mxnet.numpy.multiarray", "ndarray")}
_OPTIMIZER_MODULES = {"mxnet.optimizer.optimizer", "mxnet.optimizer", "mxnet.optimizer.contrib"}
_SCHEDULER_MODULES = {"mxnet.lr_scheduler"}
_IGNORED_ATTRS = {"param_dict", "allow_np_array", "sym_info"}


class _Stub:
    """What an allowed MXNet class unpickles into, before conversion."""

    state = None

    def __init__(self, *args):  # MXNet's NDArray is rebuilt as ``NDArray(None)``, then its state
        pass

    def __setstate__(self, state):
        self.state = state


def _stub_class(kind, name):
    return type(f"_{kind}_{name}", (_Stub,), {"_kind": kind, "_name": name})


def _global_name(data):
    """The globals a pickle names, found by reading its opcodes (nothing runs)."""
    names, strings = [], []
    for op, arg, _pos in pickletools.genops(data):
        if op.name in ("GLOBAL", "INST"):
            names.append(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            names.append(f"{strings[-2]}.{strings[-1]}")
        if isinstance(arg, str):
            strings.append(arg)
    return names


def is_mxnet_states(data):
    """Whether ``data`` is a pickle that names one of MXNet's classes (read, never run).

    >>> import pickle
    >>> is_mxnet_states(pickle.dumps({0: None}))
    False
    """
    try:
        return any(n.startswith("mxnet.") for n in _global_name(data))
    except Exception:  # not a pickle at all: not MXNet's either
        return False


class _AllowList(pickle.Unpickler):
    def __init__(self, f, where):
        super().__init__(f)
        self.where = where

    def find_class(self, module, name):
        if (module, name) == ("builtins", "bytearray"):
            return bytearray
        if (module, name) in _NDARRAY_CLASSES:
            return _stub_class("ndarray", name)
        if module in _OPTIMIZER_MODULES and name.lower() in Optimizer.opt_registry:
            return _stub_class("optimizer", name)
        if module in _SCHEDULER_MODULES and isinstance(getattr(_lr_scheduler, name, None), type):
            return _stub_class("scheduler", name)
        raise FileFormatError(f"{self.where}: the pickle asks for the global '{module}.{name}', "
                              f"which an MXNet .states file never holds; refused, nothing in the "
                              f"file was run")


def _ndarray(stub, where):
    state = stub.state
    raw = state.get("handle") if isinstance(state, dict) else None
    if not isinstance(raw, (bytes, bytearray)):
        raise FileFormatError(f"{where}: an MXNet {stub._name} without its raw bytes "
                              f"(state {type(state).__name__})")
    return mxnet_format.read_single(io.BytesIO(bytes(raw)), len(raw), where)


def _attrs(stub, where):
    if not isinstance(stub.state, dict):
        raise FileFormatError(f"{where}: MXNet {stub._name}'s state is a "
                              f"{type(stub.state).__name__}, expected a dict of attributes")
    return stub.state


def _optimizer(stub, where):
    opt = Optimizer.opt_registry[stub._name.lower()]()
    state = opt.__getstate__()
    for key, value in _attrs(stub, where).items():
        if key in state and key not in _IGNORED_ATTRS:
            state[key] = _convert(value, where)
    opt.__setstate__(state)
    return opt


def _scheduler(stub, where):
    cls = getattr(_lr_scheduler, stub._name)
    sched = cls.__new__(cls)
    sched.__dict__.update({k: _convert(v, where) for k, v in _attrs(stub, where).items()})
    return sched


def _convert(obj, where):
    if isinstance(obj, _Stub):
        return {"ndarray": _ndarray, "optimizer": _optimizer,
                "scheduler": _scheduler}[obj._kind](obj, where)
    if isinstance(obj, dict):
        return {_convert(k, where): _convert(v, where) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return tuple(_convert(v, where) for v in obj)
    if isinstance(obj, list):
        return [_convert(v, where) for v in obj]
    return obj


def loads(data, where="<bytes>"):
    """Unpickle an MXNet 1.x ``.states`` blob into sparsenet objects, running nothing from it.

    Parameters
    ----------
    data : bytes
    where : str
        The file's name, for error messages.

    Returns
    -------
    dict or tuple
        The states (``index -> NDArray | tuple | None``), or ``(states, optimizer)`` when the
        file holds the optimizer too (``Trainer.save_states``).
    """
    try:
        obj = _AllowList(io.BytesIO(data), where).load()
    except FileFormatError:
        raise
    except Exception as e:  # truncated or malformed pickle
        raise FileFormatError(f"{where}: not a readable MXNet .states pickle "
                              f"({type(e).__name__}: {e})") from None
    return _convert(obj, where)
