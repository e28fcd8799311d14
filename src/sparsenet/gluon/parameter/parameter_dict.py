""":class:`ParameterDict`: a block's parameters by name, with sharing, save and load.

>>> import sparsenet as mx
>>> d = mx.gluon.ParameterDict('net_')
>>> _ = d.get('weight', shape=(2, 2)); _ = d.get_constant('scale', [1.0])
>>> list(d.keys())
['net_weight', 'net_scale']
"""
import re
from collections import OrderedDict

from ... import initializer
from ...base import InvalidArgumentError, UnknownNameError, numpy_dtype
from ...ndarray.serialization import load as _load, save as _save
from ..utils import _brief_print_list, _indent
from .parameter import Constant, Parameter

__all__ = ["ParameterDict", "select_params"]


class ParameterDict:
    """An ordered ``name -> Parameter`` dictionary whose :meth:`get` creates ``prefix + name``.

    Parameters
    ----------
    prefix : str
    shared : ParameterDict, optional
        :meth:`get` looks names up there first (parameter sharing).

    Examples
    --------
    >>> import sparsenet as mx
    >>> d = mx.gluon.ParameterDict('net_')
    >>> w = d.get('weight', shape=(2, 2))
    >>> w.name, list(d.keys())
    ('net_weight', ['net_weight'])
    """

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        """Prepended to the names :meth:`get` creates."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """Return parameter ``prefix + name``, creating it with ``kwargs`` if new.

        An existing parameter must agree with the given attributes (unknown
        ``0`` dimensions of a shape are filled in).
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape":
                v = (v,) if isinstance(v, int) else tuple(v)
                if len(v) == len(existing) and all(
                        a == b or a == 0 or b == 0 for a, b in zip(v, existing)):
                    param._shape = tuple(b if a == 0 else a for a, b in zip(v, existing))
                    continue
            elif k == "dtype" and numpy_dtype(v) == numpy_dtype(existing):
                continue
            if v is not None and v != existing:
                raise InvalidArgumentError(
                    f"Cannot retrieve Parameter '{name}' because desired attribute "
                    f"does not match with stored for attribute '{k}': desired "
                    f"'{v}' vs stored '{existing}'.")
        return param

    def get_constant(self, name, value=None):
        """Return constant ``prefix + name``, creating it from ``value`` if new."""
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise UnknownNameError(
                    f"No constant named '{name}'. Please specify value if you want "
                    f"to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None and not isinstance(param, Constant):
            raise InvalidArgumentError(
                f"Parameter '{name}' already exists but it is not a constant.")
        return param

    def update(self, other):
        """Copy every parameter of ``other`` in (names must not clash with other objects)."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise InvalidArgumentError(
                    f"Cannot update self with other because they have different "
                    f"Parameters with the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every parameter (``init`` is the default for those without their own)."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to zero."""
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        """Contexts any parameter lives on."""
        s = set()
        for p in self.values():
            s.update(p.list_ctx())
        return list(s)

    def setattr(self, name, value):
        """Set attribute ``name`` (e.g. 'grad_req', 'lr_mult') on every parameter."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=""):
        """Save every value to ``filename`` (atomic write; storage types kept)."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise InvalidArgumentError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but "
                    f"Parameter's name '{param.name}' does not start with "
                    f"'{strip_prefix}'. This may be due to your Block sharing "
                    f"parameters from other Blocks or a child block created "
                    f"outside 'with name_scope()'.")
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        _save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by :meth:`save` (names get ``restore_prefix`` prepended)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise InvalidArgumentError(
                        f"restore_prefix is '{restore_prefix}' but Parameters name "
                        f"'{name}' does not start with '{restore_prefix}'")
        self.load_dict(_load(filename), ctx, allow_missing, ignore_extra, restore_prefix,
                       filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load values from a ``name -> NDArray`` dict (``arg:``/``aux:`` prefixes dropped)."""
        lprefix = len(restore_prefix)
        items = param_dict.items() if isinstance(param_dict, dict) else param_dict
        loaded = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v) for k, v in items]
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        where = f"file '{filename}'" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise InvalidArgumentError(
                        f"Parameter '{name[lprefix:]}' is missing in {where}, which "
                        f"contains parameters: "
                        f"{_brief_print_list(arg_dict.keys())}. Set "
                        f"allow_missing=True to ignore missing parameters.")
        for name in arg_dict:  # before anything is written: all of it loads, or none
            param = self._params.get(name)
            trainer = param._store_holding() if param is not None and param._data else None
            if trainer is not None:
                trainer._check_resettable(param)
        for name in arg_dict:
            if name not in self._params:
                if not ignore_extra:
                    raise InvalidArgumentError(
                        f"Parameter '{name[lprefix:]}' loaded from {where} is not "
                        f"present in ParameterDict, choices are: "
                        f"{_brief_print_list(self._params.keys())}. Set "
                        f"ignore_extra=True to ignore.")
                continue
            self._params[name]._load_init(arg_dict[name], ctx, cast_dtype=cast_dtype,
                                          dtype_source=dtype_source)


def select_params(params, select):
    """The parameters of a name -> Parameter mapping whose names match regex ``select``."""
    if not select:
        return dict(params.items())
    pattern = re.compile(select)
    return {name: p for name, p in params.items() if pattern.match(name)}
