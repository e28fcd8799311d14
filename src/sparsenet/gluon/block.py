"""Gluon blocks: :class:`Block` (imperative layers) and :class:`HybridBlock` (``hybrid_forward``).

Blocks nest: assigning a Block to an attribute registers it as a child, and
assigning a :class:`~sparsenet.gluon.Parameter` registers a parameter that
``hybrid_forward`` receives by attribute name. Names follow MXNet 1.x: a block
created outside any ``name_scope()`` is named from a global per-class counter
(``dense0``, ``dense1``, ...); inside a parent's ``name_scope()`` it gets the
parent's prefix and a per-parent counter. Parameters are named
``block prefix + name`` (``dense0_weight``).

>>> import sparsenet as mx
>>> class Affine(mx.gluon.HybridBlock):
...     def __init__(self, **kwargs):
...         super().__init__(**kwargs)
...         with self.name_scope():
...             self.w = self.params.get('weight', shape=(2, 3), init='ones')
...     def hybrid_forward(self, F, x, w):
...         return F.dot(x, w)
>>> blk = Affine(prefix='affine_')
>>> blk.initialize()
>>> blk(mx.nd.ones((1, 2))).asnumpy()
array([[2., 2., 2.]], dtype=float32)
>>> list(blk.collect_params().keys())
['affine_weight']
"""
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

from .. import initializer, ndarray as nd
from ..base import (FileFormatError, InvalidArgumentError, InvalidArgumentTypeError,
                    ParameterAssertionError, ShapeError, UnsupportedError)
from ..ndarray.ndarray import NDArray
from ..ops.registry import _MULTI_DEVICE
from ..symbol.symbol import Symbol
from .hybrid import export_block, run_hybridized, symbolic_forward
from .parameter import DeferredInitializationError, Parameter, ParameterDict
from .utils import HookHandle, _brief_print_list, _indent

__all__ = ["Block", "HybridBlock"]


class _Names(threading.local):
    """Per-thread counters of automatic block names (MXNet's NameManager for blocks)."""

    def __init__(self):
        self.counter = {}
        self.scope = None


_NAMES = _Names()


class _BlockScope:
    """The ``with block.name_scope():`` context: children get the block's prefix."""

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """Return ``(prefix, params)`` for a new block (see the module docstring)."""
        current = _NAMES.scope
        if current is None:
            if prefix is None:
                count = _NAMES.counter.get(hint, 0)
                _NAMES.counter[hint] = count + 1
                prefix = f"{hint}{count}_"
            params = ParameterDict(prefix) if params is None else \
                ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = _NAMES.scope
        _NAMES.scope = self
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        _NAMES.scope = self._old_scope


class Block:
    """Base class of layers and models: override :meth:`forward`.

    Parameters
    ----------
    prefix : str, optional
        Name prefix of the block and its parameters (automatic when omitted).
    params : ParameterDict, optional
        Share these parameters (e.g. ``params=other.collect_params()``).

    Examples
    --------
    >>> import sparsenet as mx
    >>> class Twice(mx.gluon.Block):
    ...     def forward(self, x):
    ...         return x * 2
    >>> Twice()(mx.nd.ones((2,))).asnumpy()
    array([2., 2.], dtype=float32)
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{type(self).__name__}(\n{modstr}\n)"

    def __setattr__(self, name, value):
        """Register child blocks and parameters assigned as attributes."""
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise InvalidArgumentTypeError(
                f"Changing attribute type for {name} from {type(existing)} to "
                f"{type(value)} is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise InvalidArgumentError(
                    f"Overriding Parameter attribute {name} is not allowed. If you "
                    f"want to share parameters between blocks, please set 'params' "
                    f"at Block construction instead.")
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def _alias(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """Prefix of the block's and its parameters' names."""
        return self._prefix

    @property
    def name(self):
        """Name of the block (the prefix without its trailing '_')."""
        return self._name

    def name_scope(self):
        """Context in which new child blocks (and parameters) get this block's prefix."""
        return self._scope

    @property
    def params(self):
        """This block's own :class:`ParameterDict` (children excluded)."""
        return self._params

    def collect_params(self, select=None):
        """Parameters of this block and all its children, optionally filtered by regex.

        Parameters
        ----------
        select : str, optional
            Regular expression matched (``re.match``) against full names, e.g.
            ``'.*weight|.*bias'``.

        Examples
        --------
        >>> import sparsenet as mx
        >>> net = mx.gluon.nn.Dense(2, in_units=3, prefix='fc_')
        >>> list(net.collect_params('.*bias').keys())
        ['fc_bias']
        """
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({n: p for n, p in self.params.items() if pattern.match(n)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _check_container_with_block(self):
        children = set(id(c) for c in self._children.values())

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(e) for e in data)
            if isinstance(data, dict):
                return any(unregistered(e) for e in data.values())
            return isinstance(data, Block) and id(data) not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or
                                                          k == "_children") and unregistered(v):
                warnings.warn(f'"{type(self).__name__}.{k}" is an unregistered container with '
                              f'Blocks. Note that Blocks inside the list, tuple or dict will '
                              f'not be registered automatically. Make sure to register them '
                              f'using register_child() or switching to '
                              f'nn.Sequential/nn.HybridSequential instead.', stacklevel=3)

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters to ``filename``, keyed by structure (``'0.weight'``).

        The write is atomic (a crash leaves any previous file intact) and storage
        types are kept, so a row_sparse weight is saved as rows + indices.

        Parameters
        ----------
        filename : str
        deduplicate : bool
            Save a parameter shared by several children once.

        Examples
        --------
        >>> import os, tempfile, sparsenet as mx
        >>> net = mx.gluon.nn.Dense(2, in_units=3); net.initialize()
        >>> path = os.path.join(tempfile.mkdtemp(), 'net.params')
        >>> net.save_parameters(path)
        >>> sorted(mx.nd.load(path))
        ['bias', 'weight']
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            first = {}
            for k, v in params.items():
                first.setdefault(id(v), (k, v))
            params = dict(first.values())
        nd.save(filename, {key: val._reduce() for key, val in params.items()})

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters written by :meth:`save_parameters` (or ``ParameterDict.save``).

        Parameters
        ----------
        filename : str
        ctx : Context or list of Context, optional
            Where to initialize parameters not initialized yet (default CPU).
        allow_missing : bool
            Skip parameters absent from the file instead of raising.
        ignore_extra : bool
            Skip arrays of the file that match no parameter instead of raising.
        cast_dtype : bool
            Cast loaded arrays to the parameter's dtype (``dtype_source='current'``)
            or adopt the file's (``'saved'``).
        dtype_source : {'current', 'saved'}
        """
        loaded = nd.load(filename)
        if not isinstance(loaded, dict):
            raise FileFormatError(f"load_parameters: '{filename}' holds a list of arrays, "
                                  f"not named parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            names_of = defaultdict(list)
            for k, v in params.items():
                names_of[id(v)].append(k)
            for name, param in params.items():
                if not any(n in loaded for n in names_of[id(param)]):
                    raise ParameterAssertionError(
                        f"Parameter '{name}' is missing in file '{filename}', which "
                        f"contains parameters: {_brief_print_list(loaded.keys())}. "
                        f"Set allow_missing=True to ignore missing parameters.")
        for name in loaded:
            if name not in params:
                if not ignore_extra:
                    raise ParameterAssertionError(
                        f"Parameter '{name}' loaded from file '{filename}' is not present in "
                        f"ParameterDict, which contains parameters "
                        f"{_brief_print_list(params.keys())}. Set ignore_extra=True to ignore.")
                continue
            params[name]._load_init(loaded[name], ctx, cast_dtype=cast_dtype,
                                    dtype_source=dtype_source)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (attributes holding blocks are registered already)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a :class:`HookHandle`."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Apply ``fn(block)`` to every descendant, then to this block; return self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize all parameters (``collect_params().initialize(...)``)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Set the hybridize flag of every HybridBlock below (execution stays imperative)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast every parameter to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for p in self.params.values():
            p.cast(dtype)

    def zero_grad(self):
        """Set the gradient buffer of every parameter to zero."""
        self.collect_params().zero_grad()

    def __call__(self, *args):
        """Run :meth:`forward` (with any registered hooks)."""
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args)
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """Override with the computation on NDArrays."""
        raise UnsupportedError(f"{type(self).__name__} must define forward()")

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for one forward of ``inputs``."""
        rows, seen, hooks = [], set(), []

        def shape_str(x):
            if isinstance(x, NDArray):
                return str(x.shape)
            if isinstance(x, (list, tuple)):
                return ", ".join(shape_str(i) for i in x)
            return str(x)

        def hook(block, _, outputs):
            n = trainable = shared = 0
            for p in block.params.values():
                size = int(_numel(p.shape))
                n += size
                trainable += 0 if p.grad_req == "null" else size
                if id(p) in seen:
                    shared += size
                seen.add(id(p))
            rows.append((f"{type(block).__name__}-{len(rows)}", shape_str(outputs), n,
                         trainable, shared))

        from .nn.basic_layers import HybridSequential, Sequential  # they subclass Block

        def register(block):
            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(hook))

        rows.append(("Input", shape_str(list(inputs) if len(inputs) > 1 else inputs[0]),
                     0, 0, 0))
        try:
            self.apply(register)
            self(*inputs)
        finally:
            for h in hooks:
                h.detach()
        fmt = "{:>20}  {:>42} {:>15}"
        print("-" * 80)
        print(fmt.format("Layer (type)", "Output Shape", "Param #"))
        print("=" * 80)
        for name, shape, n, _, _ in rows:
            print(fmt.format(name, shape, n))
        total = sum(r[2] for r in rows)
        trainable = sum(r[3] for r in rows)
        shared = sum(r[4] for r in rows)
        print("=" * 80)
        print("Parameters in forward computation graph, duplicate included")
        print("   Total params: " + str(total))
        print("   Trainable params: " + str(trainable))
        print("   Non-trainable params: " + str(total - trainable))
        print("Shared params in forward computation graph: " + str(shared))
        print("Unique parameters in model: " + str(total - shared))
        print("-" * 80)

    def memory_summary(self, print_fn=print):
        """Print the bytes held by every parameter's value and gradient, by storage type.

        Sparse arrays count their stored parts. This is the seed tutorial's
        ``print_memory_allocation`` for a whole model (see also
        :func:`sparsenet.gluon.utils.print_memory_allocation`).

        Examples
        --------
        >>> import sparsenet as mx
        >>> net = mx.gluon.nn.Dense(2, in_units=3, prefix='ms_'); net.initialize()
        >>> net.memory_summary()
        parameter          shape      stype           MB  grad stype      grad MB
        ms_weight          (2, 3)     default      0.000  default           0.000
        ms_bias            (2,)       default      0.000  default           0.000
        total                                      0.000                    0.000
        """
        rows = []
        for name, p in self.collect_params().items():
            arrays = p._check_and_get(p._data, list)
            grads = p.list_grad() if p.grad_req != "null" else []
            rows.append((name, str(p.shape), p.stype, sum(a.nbytes for a in arrays),
                         p.grad_stype if grads else "-", sum(g.nbytes for g in grads)))
        width = max([len(r[0]) for r in rows] + [9]) + 2
        sw = max([len(r[1]) for r in rows] + [5]) + 2
        print_fn(f"{'parameter':<{width}}{'shape':<{sw}} {'stype':<10} {'MB':>8}  "
                 f"{'grad stype':<10} {'grad MB':>12}")
        for name, shape, stype, nb, gstype, gb in rows:
            print_fn(f"{name:<{width}}{shape:<{sw}} {stype:<10} {nb / 1e6:8.3f}  "
                     f"{gstype:<10} {gb / 1e6:12.3f}")
        print_fn(f"{'total':<{width}}{'':<{sw}} {'':<10} "
                 f"{sum(r[3] for r in rows) / 1e6:8.3f}  {'':<10} "
                 f"{sum(r[5] for r in rows) / 1e6:12.3f}")


def _numel(shape):
    n = 1
    for s in shape or ():
        n *= s
    return n


class HybridBlock(Block):
    """A block whose computation is ``hybrid_forward(F, x, *args, **params)`` with ``F = mx.nd``.

    The parameters registered as attributes are passed to ``hybrid_forward``
    by attribute name, on the context of the first input. A parameter whose
    shape has unknown (0) dimensions is initialized at the first call, after
    :meth:`infer_shape` fills in its shape from the inputs. ``hybridize()``
    sets a flag; execution stays imperative.

    Examples
    --------
    >>> import sparsenet as mx
    >>> class Scale(mx.gluon.HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         self.s = self.params.get('scale', shape=(1,), init=mx.init.Constant(3.0))
    ...     def hybrid_forward(self, F, x, s):
    ...         return F.broadcast_mul(x, s)
    >>> b = Scale(); b.initialize(); b.hybridize()
    >>> b(mx.nd.ones((2,))).asnumpy()
    array([3., 3.], dtype=float32)
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._active = False
        self._flags = []
        self._cached_graph = None

    def hybridize(self, active=True, **kwargs):
        """Run this block (and its HybridBlock children) as a symbol graph from the next call.

        The graph is built by calling ``hybrid_forward`` with ``F = mx.sym`` and
        runs with the symbolic executor's operators (see
        :mod:`sparsenet.gluon.hybrid`); ``active=False`` returns to
        imperative calls.
        """
        self._active = active
        self._flags = list(kwargs.items())
        self._cached_graph = None
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/pre-'
                          f'hook. If "{self}" is a child of HybridBlock, the hooks will not '
                          f'take effect.')
        super().hybridize(active, **kwargs)

    def infer_shape(self, *args):
        """Fill in unknown parameter dimensions from the inputs (layers override this)."""
        unknown = [p.name for p in self.params.values() if p.shape is None or 0 in p.shape]
        raise ShapeError(f"{type(self).__name__} cannot infer the shapes of {unknown}: give "
                         f"their full shapes, or define infer_shape(self, *inputs) setting "
                         f"param.shape")

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as e:
            raise ShapeError(f"Deferred initialization failed because shape cannot be "
                             f"inferred. {e}") from e

    def forward(self, x, *args):
        """Run ``hybrid_forward(mx.nd, x, *args, **params)`` on the inputs' context.

        On Symbols (while a hybridized parent traces its graph) this adds the
        block's operators to the graph; once hybridized, NDArray calls run the
        cached graph.
        """
        if not isinstance(x, NDArray):  # the NDArray test first: it is the common call
            if isinstance(x, Symbol):
                return symbolic_forward(self, x, *args)
        if self._active:
            out = run_hybridized(self, x, *args)
            if out is not NotImplemented:
                return out
        reg = self._reg_params
        if not reg:
            return self.hybrid_forward(nd, x, *args)
        if not isinstance(x, NDArray):
            raise InvalidArgumentTypeError(
                f"{type(self).__name__}: the first input must be an NDArray, got "
                f"{type(x).__name__}")
        try:
            params = {}
            for k, p in reg.items():  # Parameter._data_like, inlined for one dense context
                arrays = p._data
                params[k] = arrays[0] if (arrays is not None and len(arrays) == 1
                                          and p._stype == "default" and not _MULTI_DEVICE) \
                    else p._data_like(x)
        except DeferredInitializationError:
            self._deferred_infer_shape(x, *args)
            for p in self.params.values():
                p._finish_deferred_init()
            for p in reg.values():
                p._finish_deferred_init()
            params = {k: p._data_like(x) for k, p in reg.items()}
        return self.hybrid_forward(nd, x, *args, **params)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write the hybridized graph (``path-symbol.json``) and parameters (``path-0000.params``).

        Call ``hybridize()`` and run the block once first. Returns the two file
        names; :meth:`SymbolBlock.imports` loads them.
        """
        return export_block(self, path, epoch)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override with the computation; ``F`` is ``mx.nd``, or ``mx.sym`` when hybridized."""
        raise UnsupportedError(f"{type(self).__name__} must define hybrid_forward()")
