"""Devices: ``mx.cpu()``, ``mx.gpu(i)`` and the default-context stack.

A :class:`Context` names a device; ``mx.gpu(i)`` is ``torch.device('cuda', i)``.
As in MXNet, ``mx.cpu(1)``, ``mx.cpu(2)`` ... are devices of their own: their
arrays live in host memory like ``cpu(0)``'s, but an array reports the context it
was placed on, operators refuse to mix contexts, and copies between them are
real copies, so data parallelism over ``[mx.cpu(0), mx.cpu(1)]`` runs on a
machine without GPUs exactly as over GPUs. torch cannot tell such contexts
apart, so an array placed on one carries its context (:func:`place`).

>>> import sparsenet as mx
>>> mx.cpu()
cpu(0)
>>> mx.cpu().torch_device
device(type='cpu')
>>> with mx.Context('cpu', 0):
...     mx.current_context()
cpu(0)
"""
import threading
import warnings

import torch

from .base import InvalidArgumentError, InvalidArgumentTypeError, SparsenetError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "place",
           "LOGICAL"]


class _Logical:
    """``LOGICAL.on``: whether an array was ever placed on a host context other than
    ``cpu(0)`` (from then on operators check and carry their inputs' context)."""

    __slots__ = ("on",)

    def __init__(self):
        self.on = False


LOGICAL = _Logical()

_DEFAULT_CTX_DEPRECATED = ("Context.default_ctx has been deprecated. Please use "
                           "Context.current_context() instead. Please use "
                           "test_utils.set_default_context to set a default context")


def _get_default_ctx(_):
    warnings.warn(_DEFAULT_CTX_DEPRECATED, DeprecationWarning, stacklevel=2)
    return current_context()


def _set_default_ctx(_, ctx):
    warnings.warn(_DEFAULT_CTX_DEPRECATED, DeprecationWarning, stacklevel=2)
    Context._default.value = as_context(ctx)


class _ContextMeta(type):
    """Makes ``Context.default_ctx`` a class property (readable and settable), as in MXNet."""

    default_ctx = property(_get_default_ctx, _set_default_ctx)


class Context(metaclass=_ContextMeta):
    """A device on which arrays live: ``Context('cpu', 0)`` or ``Context('gpu', 1)``.

    Parameters
    ----------
    device_type : str or Context
        ``'cpu'``, ``'gpu'`` (CUDA) or ``'cpu_pinned'``; or a Context to copy.
    device_id : int
        Device ordinal.

    Examples
    --------
    >>> Context('gpu', 1)
    gpu(1)
    >>> Context('cpu') == cpu()
    True
    """
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
    _default = threading.local()

    __slots__ = ("device_type", "device_id", "_torch_device", "_old", "_logical")

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        elif isinstance(device_type, torch.device):
            device_id = device_type.index or 0
            device_type = "gpu" if device_type.type == "cuda" else device_type.type
        if device_type not in self.devstr2type:
            raise InvalidArgumentError(f"unknown device type {device_type!r}; expected one of "
                                       f"{sorted(self.devstr2type)}")
        self.device_type = device_type
        self.device_id = int(device_id)
        if device_type == "gpu":
            self._torch_device = torch.device("cuda", self.device_id)
        else:
            self._torch_device = torch.device("cpu")
        # a host context torch cannot tell from cpu(0): its arrays carry it (place)
        self._logical = device_type != "gpu" and (device_type, self.device_id) != ("cpu", 0)
        self._old = None

    #: The default context (deprecated in MXNet; use :func:`current_context`).
    #: ``Context.default_ctx = mx.cpu(1)`` changes the default for this thread.
    default_ctx = property(_get_default_ctx)

    @property
    def device_typeid(self):
        """MXNet's numeric device type (cpu 1, gpu 2)."""
        return self.devstr2type[self.device_type]

    @property
    def torch_device(self):
        """The ``torch.device`` this context stands for."""
        return self._torch_device

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self):
        self._old = current_context()
        Context._default.value = self
        return self

    def __exit__(self, *exc):
        Context._default.value = self._old

    def check_available(self):
        """Raise :class:`~sparsenet.base.SparsenetError` if the device cannot hold arrays.

        >>> cpu().check_available()
        """
        if self.device_type != "gpu":
            return
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if self.device_id >= n:
            raise SparsenetError(f"{self} is not available: torch sees {n} CUDA device(s); "
                                 f"use mx.cpu() or check mx.test_utils.list_gpus()")

    def empty_cache(self):
        """Release cached GPU memory (no-op on CPU)."""
        if self.device_type == "gpu" and torch.cuda.is_available():
            torch.cuda.empty_cache()


def cpu(device_id=0):
    """Return the CPU context.

    >>> cpu()
    cpu(0)
    """
    return Context("cpu", device_id)


def cpu_pinned(device_id=0):
    """Return the pinned-memory CPU context (arrays live on the CPU)."""
    return Context("cpu_pinned", device_id)


def gpu(device_id=0):
    """Return the CUDA context ``gpu(device_id)`` (``torch.device('cuda', device_id)``).

    Creating the context never fails; placing an array on it needs CUDA.

    >>> gpu(0)
    gpu(0)
    """
    return Context("gpu", device_id)


def num_gpus():
    """Return the number of CUDA devices torch can see.

    >>> num_gpus() >= 0
    True
    """
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def current_context():
    """Return the default context (``cpu(0)`` unless changed with ``with ctx:``).

    >>> current_context()
    cpu(0)
    """
    ctx = getattr(Context._default, "value", None)
    return ctx if ctx is not None else _CPU0


def as_context(ctx):
    """Return ``ctx`` as a :class:`Context` (None means the current context)."""
    if ctx is None:
        return current_context()
    if isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, (torch.device, str)):
        if isinstance(ctx, str) and ctx not in Context.devstr2type:
            return Context(torch.device(ctx))
        return Context(ctx)
    raise InvalidArgumentTypeError(f"expected a Context such as mx.cpu() or mx.gpu(0), got "
                                   f"{ctx!r}")


def place(array, ctx):
    """Mark ``array`` as living on ``ctx`` and return it.

    Only host contexts other than ``cpu(0)`` need the mark (torch tells CUDA
    devices apart by itself); placing an array on ``cpu(0)`` or a GPU leaves it
    unmarked.

    >>> import sparsenet as mx
    >>> place(mx.nd.zeros((1,)), mx.cpu(1)).context
    cpu(1)
    """
    if ctx._logical:
        array._ctx = ctx
        LOGICAL.on = True
    elif getattr(array, "_ctx", None) is not None:
        array._ctx = None
    return array


def context_of(device):
    """Return the Context of a torch device."""
    if device.type == "cpu":
        return _CPU0
    return Context(device)


_CPU0 = Context("cpu", 0)
