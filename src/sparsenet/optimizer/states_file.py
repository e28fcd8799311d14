"""Reading sparsenet's own optimizer-state blobs (``Trainer.save_states``,
``Module.save_optimizer_states``) without running code from them.

The blob is a pickle of the states (and the optimizer) written by
:meth:`sparsenet.optimizer.Updater.get_states`. It is read with a
:class:`pickle.Unpickler` whose ``find_class`` knows only what such a blob
refers to: sparsenet's array records (rebuilt by
``sparsenet.ndarray.serialization._decode_array``, which validates them), the
tensors inside them (rebuilt by torch's own ``weights_only`` loader), the
optimizers and learning-rate schedulers sparsenet defines (restored attribute by
attribute, no constructor runs), and ``collections.OrderedDict``. Any other
global in the file raises :class:`~sparsenet.base.FileFormatError` naming it.
MXNet 1.x ``.states`` files go through :mod:`sparsenet.optimizer.mxnet_states`.

>>> import pickle
>>> loads(pickle.dumps({0: None}), 'x.states')
{0: None}
>>> loads(pickle.dumps(print), 'x.states')
Traceback (most recent call last):
...
sparsenet.base.FileFormatError: x.states: the states file refers to builtins.print, which a states file never holds; refusing to load it (no code from the file was run)
"""
import collections
import io
import pickle
import warnings

import torch

from .. import lr_scheduler
from ..base import FileFormatError
from ..ndarray.serialization import _decode_array
from ..torch_compat import rebuild_tensor
from .optimizer import Optimizer

__all__ = ["loads"]


def _storage_from_bytes(b):
    """torch's ``_load_from_bytes`` for a tensor storage, with torch's safe loader (its
    warnings about odd pickle protocols are dropped: a bad blob raises FileFormatError)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.load(io.BytesIO(b), weights_only=True)


_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("sparsenet.ndarray.serialization", "_decode_array"): _decode_array,
    ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
    ("torch.storage", "_load_from_bytes"): _storage_from_bytes,
}


def _sparsenet_class(module, name):
    """An optimizer or scheduler class sparsenet defines, or None."""
    if module.startswith("sparsenet.optimizer."):
        cls = Optimizer.opt_registry.get(name.lower())
        if cls is not None and cls.__module__ == module and cls.__name__ == name:
            return cls
    if module == "sparsenet.lr_scheduler":
        cls = getattr(lr_scheduler, name, None)
        if isinstance(cls, type) and issubclass(cls, lr_scheduler.LRScheduler):
            return cls
    return None


class _StatesUnpickler(pickle.Unpickler):
    def __init__(self, f, where):
        super().__init__(f)
        self.where = where

    def find_class(self, module, name):
        found = _ALLOWED.get((module, name)) or _sparsenet_class(module, name)
        if found is None:
            raise FileFormatError(
                f"{self.where}: the states file refers to {module}.{name}, which a states file "
                f"never holds; refusing to load it (no code from the file was run)")
        return found


def loads(data, where="<bytes>"):
    """Unpickle a states blob written by sparsenet, running nothing from it.

    Parameters
    ----------
    data : bytes
    where : str
        Named in errors (the file name).

    Raises
    ------
    FileFormatError
        For a global outside the allow-list, or a truncated or corrupt blob (whatever the
        unpickler or torch's tensor loader raised, a memory error included), naming
        ``where``.
    """
    try:
        return _StatesUnpickler(io.BytesIO(data), where).load()
    except FileFormatError as e:
        if str(e).startswith(f"{where}: "):
            raise
        # an array record in the blob names "<pickle>": name the file instead
        detail = str(e).removeprefix("<pickle>: ")
        raise FileFormatError(f"{where}: {detail}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError,
            KeyError, RuntimeError, AssertionError, MemoryError, OverflowError) as e:
        # what the unpickler and torch's tensor loader raise on a bad blob (nothing ran)
        raise FileFormatError(f"{where}: not a readable optimizer-states file, or a truncated "
                              f"or corrupt one ({_reason(e)})") from None


def _reason(err):
    """What went wrong, in one line, without torch's advice about unsafe loading (its
    ``weights_only`` messages suggest ``weights_only=False``, which would run the file)."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    if isinstance(err, MemoryError):
        return "a size in it is larger than this machine's memory"
    if "weights_only" in str(err) or not text:
        return type(err).__name__
    return f"{type(err).__name__}: {text[:200]}"
