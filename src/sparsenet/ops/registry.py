"""The one operator registry: dense definitions, storage-type rules, fallback.

Every operator is defined once, by a documented function on dense torch
tensors decorated with :func:`defop`. Its positional parameters are the array
inputs, its keyword-only parameters the operator's parameters. Sparse kernels
attach to it as rule rows with :func:`rule`: which input storage types the
kernel takes, which storage type it returns, and under which parameters::

    @defop
    def dot(lhs, rhs, *, transpose_a=False, transpose_b=False, forward_stype=None):
        '''Dot product ...'''
        ...dense torch code...

    @rule(dot, CSR, DEFAULT, out=DEFAULT, when={"transpose_a": False})
    def _dot_csr_dns(lhs, rhs, **params): ...

Three users read the rows: eager calls (``mx.nd.dot(...)``), the symbolic
storage-type pass (:meth:`Operator.infer_storage`), and the generated table
``docs/stype_table.md`` (:func:`stype_table`, written by ``tools/gen_stype_table.py``).

When no row matches, the call *falls back*: the inputs are densified, the dense
definition runs, a sparse ``out=`` (or ``forward_stype``) is cast back, and the
policy of :mod:`sparsenet.config` decides between a warning, an error and
silence.

>>> import sparsenet as mx
>>> from sparsenet.ops.registry import get_op
>>> get_op('dot').infer_storage(('csr', 'default'), {'transpose_a': True})
('row_sparse', True)
"""
import inspect
import operator

import numpy as np
import torch

from .. import config
from ..recording import STATE
from ..torch_compat import set_grad_enabled
from .trace import note, tag_new
from ..base import (InvalidArgumentError, InvalidArgumentTypeError, OperatorArgumentError,
                    UnknownOperatorError)
from .errors import CONVERTED, raise_op_error
from ..context import LOGICAL, Context, place
from ..ndarray.csr import CSRNDArray
from ..ndarray.ndarray import NDArray, copy_into, wrap
from ..ndarray.row_sparse import RowSparseNDArray
from ..ndarray.stype import CSR, DEFAULT, ROW_SPARSE, STYPES

__all__ = ["Operator", "Many", "defop", "rule", "numbered_outputs", "input_shapes", "output_shapes",
           "dtype_rule",
           "get_op", "list_ops",
           "OPERATORS", "stype_table", "DEFAULT", "CSR", "ROW_SPARSE"]

OPERATORS = {}
_ARRAY_TYPES = frozenset((NDArray, CSRNDArray, RowSparseNDArray))  # the container classes
_STYPE_OF = operator.attrgetter("stype")
_DENSE_TYPE = frozenset((NDArray,))  # exactly the dense container (no subclass)
_TENSOR_OF = operator.attrgetter("_t")
# arrays can live on several devices only when torch sees an accelerator
_MULTI_DEVICE = torch.cuda.is_available() or (hasattr(torch, "backends") and hasattr(
    torch.backends, "mps") and torch.backends.mps.is_available())
_ABBREV = {DEFAULT: "dns", CSR: "csr", ROW_SPARSE: "rsp"}
_MAX_PLANS = 64  # cached (rule, forced stype) answers per operator (see Operator._rule_plan)
_UNKNOWN = object()  # a forced output stype not yet read from the parameters


class Many:
    """Input pattern of a variadic operator: every input's stype is in ``allowed``.

    Parameters
    ----------
    allowed : str
        Storage types each input may have.
    needs : str, optional
        A storage type at least one input must have.

    Examples
    --------
    >>> Many(ROW_SPARSE).matches(('row_sparse', 'row_sparse'))
    True
    >>> Many(DEFAULT, CSR, ROW_SPARSE, needs=DEFAULT).matches(('csr', 'csr'))
    False
    """

    def __init__(self, *allowed, needs=None):
        self.allowed = frozenset(allowed)
        self.needs = needs

    def matches(self, stypes):
        if not stypes or not all(s in self.allowed for s in stypes):
            return False
        return self.needs is None or self.needs in stypes

    def __str__(self):
        allowed = "|".join(_ABBREV[s] for s in STYPES if s in self.allowed)
        text = f"{allowed}, ..." if len(self.allowed) > 1 else f"{allowed}, {allowed}, ..."
        return text + (f" (at least one {_ABBREV[self.needs]})" if self.needs else "")


class Rule:
    """One row of an operator's storage-type table."""

    __slots__ = ("op", "pattern", "out", "when", "fn", "condition", "values_grad", "reads")

    def __init__(self, op, pattern, out, when, fn, values_grad=False, reads=None):
        self.op, self.pattern, self.out, self.fn = op, pattern, out, fn
        self.values_grad, self.reads = values_grad, reads
        if when is None:
            self.when, self.condition = None, ""
        elif isinstance(when, dict):
            keys, values = tuple(when), tuple(when.values())
            if len(keys) == 1:
                key, value = keys[0], values[0]
                self.when = lambda p: p[key] == value
            elif len(keys) == 2:  # the common case (dot's transpose flags), without a generator
                (k1, k2), (v1, v2) = keys, values
                self.when = lambda p: p[k1] == v1 and p[k2] == v2
            else:
                self.when = lambda p: all(p[k] == v for k, v in zip(keys, values))
            self.condition = ", ".join(f"{k}={v!r}" for k, v in when.items())
        else:
            self.when = when
            self.condition = (when.__doc__ or when.__name__).strip()

    def applies(self, params):
        return self.when is None or self.when(params)

    def inputs_text(self):
        if isinstance(self.pattern, Many):
            return str(self.pattern)
        return ", ".join(_ABBREV[s] for s in self.pattern)

    def markdown_cells(self):
        """``(inputs, output, when)`` as Markdown table cells (a ``|`` escaped)."""
        return tuple(text.replace("|", "\\|") for text in
                     (self.inputs_text(), _ABBREV[self.out], self.condition or "always"))


class Operator:
    """An operator: a dense definition on torch tensors plus storage-type rule rows.

    Call it like a function on NDArrays: ``op(*arrays, out=None, **params)``.
    Do not build one directly; use :func:`defop`.
    """

    def __init__(self, fn, name=None, num_outputs=1, differentiable=True, aux=(),
                 output_names=None, input_inits=None, required_inputs=None):
        self.fn = fn
        # symbol traits (read by sparsenet.symbol.op_traits): auxiliary-state inputs, output
        # names, '__init__' of the variables created at inputs, inputs params make required
        self.aux_inputs = tuple(aux)
        self.output_names = output_names
        self.input_inits = dict(input_inits or {})
        self.required_inputs = required_inputs
        self.name = name or fn.__name__
        self.__name__ = self.name
        self.__qualname__ = self.name
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self._num_outputs = num_outputs
        self.differentiable = differentiable
        self.input_names, self.variadic, self.defaults = _signature(fn)
        self._param_names = tuple(self.defaults)
        self._has_forward_stype = "forward_stype" in self.defaults
        self._param_set = frozenset(self.defaults)
        self._n_inputs = len(self.input_names)
        self._n_required = sum(1 for p in inspect.signature(fn).parameters.values()
                               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                               and p.default is p.empty)
        self._rules = {}
        self._many_rules = []
        # (input stypes) -> (rule row or None, forced output stype): the registry's answer for
        # a call with no parameter given (the bound parameters are then ``self.defaults``),
        # kept until a rule row is added (see _rule_plan)
        self._rule_plans = {}
        self._dense_only = not self.variadic and not self._has_forward_stype
        self.input_shapes = None  # see input_shapes(): completes unknown input shapes
        self.dtype_rule = None  # see dtype_rule(): input and output dtypes from the params
        self.output_dtype = None  # the dtype of every output when fixed (e.g. shape_array)
        OPERATORS[self.name] = self

    # ------------------------------------------------------------------ documentation
    @property
    def __doc__(self):
        doc = inspect.cleandoc(self.fn.__doc__ or "")
        table = self.rules_markdown()
        return f"{doc}\n\nStorage types\n-------------\n{table}\n" if table else doc

    def rules(self):
        """All rule rows, in registration order."""
        rows = [r for rs in self._rules.values() for r in rs] + list(self._many_rules)
        return rows

    def rules_markdown(self):
        rows = self.rules()
        if not rows:
            return ""
        lines = ["| inputs | output | when |", "|---|---|---|"]
        for r in rows:
            lines.append("| " + " | ".join(r.markdown_cells()) + " |")
        lines.append("| any other | dns, with a storage fallback | |")
        return "\n".join(lines)

    def __repr__(self):
        return f"<operator {self.name}>"

    # ------------------------------------------------------------------ rules
    def add_rule(self, pattern, out, when, fn, values_grad=False, reads=None):
        if out not in STYPES:
            raise InvalidArgumentError(f"rule for {self.name}: unknown output stype {out!r}")
        r = Rule(self, pattern, out, when, fn, values_grad, reads)
        self._rule_plans.clear()  # a new row may change the answer for any storage types
        if isinstance(pattern, Many) or all(st == DEFAULT for st in pattern):
            self._dense_only = False  # dense inputs may run a rule: take the dispatching path
        if isinstance(pattern, Many):
            self._many_rules.append(r)
        else:
            for s in pattern:
                if s not in STYPES:
                    raise InvalidArgumentError(f"rule for {self.name}: unknown input stype {s!r}")
            self._rules.setdefault(tuple(pattern), []).append(r)
        return r

    def find_rule(self, stypes, params):
        """Return the rule row for input storage types ``stypes`` and ``params``, or None."""
        for r in self._rules.get(stypes, ()):
            if r.when is None or r.when(params):
                return r
        for r in self._many_rules:
            if r.pattern.matches(stypes) and r.applies(params):
                return r
        return None

    def _rule_plan(self, stypes):
        """``(rule row or None, forced output stype or None)`` for input storage types
        ``stypes`` and the default parameters: :meth:`find_rule`'s and :meth:`_forced_stype`'s
        answers, cached per storage types (a row's ``when`` reads the parameters only, which
        are the defaults here); :meth:`add_rule` empties the cache."""
        plan = self._rule_plans.get(stypes)
        if plan is None:
            params = self.defaults
            forced = self._forced_stype(params) if self._has_forward_stype else None
            plan = (self.find_rule(stypes, params), forced)
            if len(self._rule_plans) >= _MAX_PLANS:  # a variadic operator's many input counts
                self._rule_plans.clear()
            self._rule_plans[stypes] = plan
        return plan

    def infer_storage(self, stypes, params=None):
        """Return ``(output_stype, dispatches_sparse_kernel)`` without running anything.

        A fallback returns ``('default', False)``, or ``forward_stype`` when the
        operator has that parameter and it is set.
        """
        params = self.bind_params(params or {})
        r = self.find_rule(tuple(stypes), params)
        forced = self._forced_stype(params)
        if r is not None:
            return forced or r.out, True
        return forced or DEFAULT, all(s == DEFAULT for s in stypes)

    def num_outputs(self, params=None):
        n = self._num_outputs
        return n(self.bind_params(params or {})) if callable(n) else n

    def _forced_stype(self, params):
        """The output storage type ``forward_stype`` forces ('default' included), or None."""
        fs = params.get("forward_stype")
        if fs is not None and fs not in STYPES:
            raise InvalidArgumentError(f"{self.name}: forward_stype must be None or one of "
                                       f"{STYPES}, got {fs!r}")
        return fs

    # ------------------------------------------------------------------ calling
    def bind_params(self, kwargs):
        """Merge ``kwargs`` with the defaults; reject unknown names with a clear error."""
        if not kwargs:
            return self.defaults
        unknown = [k for k in kwargs if k not in self.defaults]
        if unknown:
            if unknown == ["name"] or (len(unknown) == 1 and unknown[0] in ("name", "attr")):
                kwargs = {k: v for k, v in kwargs.items() if k not in ("name", "attr")}
            else:
                unknown = [k for k in unknown if k not in ("name", "attr")]
                if unknown:
                    raise OperatorArgumentError(
                        f"{self.name}() got unexpected parameter(s) {unknown}; its "
                        f"parameters are {list(self._param_names)}")
                kwargs = {k: v for k, v in kwargs.items() if k not in ("name", "attr")}
        params = dict(self.defaults)
        params.update(kwargs)
        return params

    def __call__(self, *args, out=None, **kwargs):
        try:  # costs nothing until something is raised
            if (self._n_required <= len(args) <= self._n_inputs
                    and (not kwargs or self._param_set.issuperset(kwargs))):
                # the common call on dense arrays: no rule applies, the dense definition runs
                # with the keyword parameters as given (the definition has the same defaults);
                # an ``out=`` receives the result as on the general path (_write_out)
                tensors = self._dense_tensors(args)
                if tensors is not None:
                    if STATE.recording:
                        res = self.fn(*tensors, **kwargs)
                        if isinstance(res, (tuple, list)):
                            res = [wrap(t) for t in res]
                            note(self, kwargs, args, res)  # for autograd.get_symbol
                        else:
                            res = wrap(res)
                            tag_new(self, kwargs, args, res)  # for autograd.get_symbol
                    else:
                        if not torch.is_grad_enabled():
                            res = self.fn(*tensors, **kwargs)
                        else:  # outside autograd.record(): nothing is recorded
                            set_grad_enabled(False)
                            try:
                                res = self.fn(*tensors, **kwargs)
                            finally:
                                set_grad_enabled(True)
                        res = ([wrap(t) for t in res] if isinstance(res, (tuple, list))
                               else wrap(res))
                    return res if out is None else _write_out(res, out)
            # arrays (dense or sparse) given positionally, parameters by keyword
            if self._positional(args, kwargs):
                inputs = args
                params = {**self.defaults, **kwargs} if kwargs else self.defaults
            else:
                inputs, params = self._split_args(args, kwargs)
            if STATE.recording:
                result = self._dispatch(inputs, params)
                note(self, params, inputs, result)  # for autograd.get_symbol
            elif not torch.is_grad_enabled():
                result = self._dispatch(inputs, params)
            else:  # outside autograd.record(): nothing is recorded
                set_grad_enabled(False)
                try:
                    result = self._dispatch(inputs, params)
                finally:
                    set_grad_enabled(True)
            if out is not None:
                return _write_out(result, out)
            return result
        except CONVERTED as e:  # a builtin error from torch or a kernel: a sparsenet one
            raise_op_error(self.name, e, args)

    def _dense_tensors(self, args):
        """The tensors of ``args`` when the dense definition may run on them directly, else
        None (the call dispatches).

        Directly means: no rule row can apply (the operator's rows all take a sparse input),
        every input is a dense NDArray, and no host context other than cpu(0) is in use
        (results are placed then). The eager fast path and a compiled symbol Program
        (:mod:`sparsenet.symbol.program`) both ask here.
        """
        if not self._dense_only or LOGICAL.on or not _DENSE_TYPE.issuperset(map(type, args)):
            return None
        tensors = list(map(_TENSOR_OF, args))
        if len(args) > 1 and _MULTI_DEVICE:
            _check_devices(args, self.name)
        return tensors

    def _positional(self, args, kwargs):
        """Whether a call gives its arrays (dense or sparse) positionally and only parameters
        by keyword (no input by name): the common call, which needs no argument binding."""
        return (not self.variadic and len(args) <= self._n_inputs
                and _ARRAY_TYPES.issuperset(map(type, args))
                and (not kwargs or self._param_set.issuperset(kwargs)))

    def _split_args(self, args, kwargs):
        if self._positional(args, kwargs):
            # the arrays as given and the bound parameters, as the general case below makes
            return list(args), self.bind_params(kwargs)
        if self.variadic:
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = tuple(args[0])
            return [_as_array(a, self.name) for a in args], self.bind_params(kwargs)
        n = len(self.input_names)
        arrays = list(args[:n])
        extra = args[n:]
        if extra:
            if len(extra) > len(self._param_names):
                raise OperatorArgumentError(f"{self.name}() takes {n} array inputs and "
                                f"{len(self._param_names)} parameters, got {len(args)} "
                                f"positional arguments")
            kwargs = dict(kwargs)
            for name, v in zip(self._param_names, extra):
                if name in kwargs:
                    raise OperatorArgumentError(f"{self.name}() got multiple values for '{name}'")
                kwargs[name] = v
        for name in self.input_names[len(arrays):]:
            if name in kwargs:
                kwargs = dict(kwargs)
                arrays.append(kwargs.pop(name))
            else:
                arrays.append(None)
        while arrays and arrays[-1] is None:
            arrays.pop()
        if any(a is None for a in arrays):
            missing = [nm for nm, a in zip(self.input_names, arrays) if a is None]
            raise OperatorArgumentError(f"{self.name}() missing array input(s) {missing}")
        return [_as_array(a, self.name) for a in arrays], self.bind_params(kwargs)

    def _dispatch(self, inputs, params):
        # inputs on a host context other than cpu(0): the result goes to the first one's
        ctx = _result_context(inputs) if LOGICAL.on else None
        stypes = tuple(map(_STYPE_OF, inputs))
        if params is self.defaults:  # no parameter given: the cached answer for these stypes
            r, forced = self._rule_plan(stypes)
        else:
            forced = _UNKNOWN
            for r in self._rules.get(stypes, ()):  # inlined find_rule: the hot path
                if r.when is None or r.when(params):
                    break
            else:
                r = self.find_rule(stypes, params) if self._many_rules else None
        if (STATE.recording and self.differentiable
                and _needs_graph(self, inputs, params, r, forced)):
            result = self._dispatch_graph(inputs, params, stypes, r)
        else:
            result = self._run(inputs, params, stypes, r, forced)
        if ctx is not None:
            _place_result(result, ctx)
        return result

    def _run(self, inputs, params, stypes, r, forced=_UNKNOWN):
        """Run rule row ``r`` (None: the storage fallback) and apply ``forward_stype``
        (``forced``: the storage type it forces, when the caller has read it already)."""
        out = NotImplemented
        if r is not None:
            out = r.fn(*inputs, **params)  # NotImplemented: the kernel declined (e.g. shapes)
        if out is NotImplemented:
            _check_devices(inputs, self.name)
            if stypes.count(DEFAULT) != len(stypes):
                config.report_fallback(self.name, stypes)
                res = self.fn(*[a._dense_tensor() for a in inputs], **params)
            else:
                res = self.fn(*[a._t for a in inputs], **params)
            if isinstance(res, (tuple, list)):
                return [wrap(t) for t in res]
            out = wrap(res)
        if not self._has_forward_stype:
            return out
        if forced is _UNKNOWN:
            forced = self._forced_stype(params)
        if forced and out.stype != forced:
            out = OPERATORS["cast_storage"](out, stype=forced)  # registered by ops/cast.py
        return out

    def _dispatch_graph(self, inputs, params, stypes, r):
        """Run the rule row (values and storage types, nothing recorded), then record the
        op on the inputs' dense graph tensors: the gradient with respect to a sparse input
        is the full mathematical gradient, as MXNet's backward gives.

        The recorded computation is the op's own dispatch with each graph-carrying sparse
        input replaced by a dense array of its graph tensor (inputs outside the graph stay
        as they are: a CSR batch is never densified), so the rule rows for those storage
        types record it: ``dot(csr, w)`` and ``Embedding`` send a variable's gradient
        back as the rows the batch touched, as MXNet does."""
        if r is not None and r.values_grad and _values_inputs(inputs):
            return self._dispatch_values(inputs, params, stypes, r)
        set_grad_enabled(False)
        try:
            out = self._run(inputs, params, stypes, r)
        finally:
            set_grad_enabled(True)
        standins = [_graph_standin(a) for a in inputs]
        graph_stypes = tuple(map(_STYPE_OF, standins))
        graph_rule = self.find_rule(graph_stypes, params)
        if (graph_rule is not None and graph_rule.out == DEFAULT
                and not (self._has_forward_stype and self._forced_stype(params))):
            # the rule row computes a full tensor from the graph tensors (a sparse result
            # would drop the gradient of entries that happen to be zero)
            res = self._run(standins, params, graph_stypes, graph_rule)
            res = [o._t for o in res] if isinstance(res, list) else res._t
        else:
            res = self.fn(*[a._t if a._t is not None else a._dense_tensor()
                            for a in standins], **params)
        if not isinstance(out, list):
            return _with_graph(out, res)
        return [_with_graph(o, t) for o, t in zip(out, res)]

    def _dispatch_values(self, inputs, params, stypes, r):
        """Record rule row ``r`` (``values_grad``) on the values of its row_sparse variable
        inputs: each becomes a view of the rows the kernel reads
        (:meth:`~sparsenet.ndarray.row_sparse.RowSparseNDArray._values_view`), whose
        gradient reaches the variable as sparse rows, as MXNet's backward kernels send it;
        the variable's dense graph tensor is never filled."""
        reads = r.reads(*inputs, **params) if r.reads is not None else {}
        views = [a._values_view(reads.get(i)) if a._t is None and a._full_grad else a
                 for i, a in enumerate(inputs)]
        return self._run(views, params, stypes, r)

    def dense(self, *tensors, **params):
        """Run the dense definition on torch tensors (no dispatch, no wrapping)."""
        return self.fn(*tensors, **self.bind_params(params))


def _needs_graph(op, inputs, params, r, forced=_UNKNOWN):
    """Whether a recorded call with rule row ``r`` must go through
    :meth:`Operator._dispatch_graph`: a sparse input is in a graph (a variable, or
    computed from one), or a sparse result would be computed from a dense input that
    requires a gradient (``forced``: the output stype ``forward_stype`` forces, when
    the caller has read it already)."""
    dense_var = False
    for a in inputs:
        if a._t is None:  # sparse
            if a._gt is not None or a._full_grad:
                return True
        elif a._t.requires_grad:
            dense_var = True
    if not dense_var:
        return False
    if forced is _UNKNOWN:
        forced = op._forced_stype(params) if op._has_forward_stype else None
    return (forced or (r.out if r is not None else DEFAULT)) != DEFAULT


def _values_inputs(inputs):
    """Whether every sparse input in a graph is a row_sparse variable whose graph tensor
    is still its leaf (so it can be differentiated through the values a kernel reads)."""
    found = False
    for a in inputs:
        if a._t is None and (a._gt is not None or a._full_grad):
            if not (a._full_grad and a.stype == ROW_SPARSE
                    and (a._gt is None or a._gt.is_leaf)):
                return False
            found = True
    return found


def _graph_standin(a):
    """What the graph records for input ``a``: a dense input or a sparse one outside any
    graph as it is; a sparse input in a graph as a dense array of its graph tensor, marked
    as a variable when ``a`` is one (kernels then send its gradient as sparse rows)."""
    if a._t is not None:
        return a
    t = a._graph_tensor()
    if t is None:
        return a
    standin = NDArray(t)
    standin._grad, standin._grad_req = a._grad, a._grad_req
    return standin


def _with_graph(out, t):
    """``out`` (the dispatched result) carrying dense graph tensor ``t``."""
    if not isinstance(t, torch.Tensor) or not t.requires_grad:
        return out
    if out.stype == DEFAULT:
        return wrap(t)
    if tuple(t.shape) != tuple(out.shape):
        t = t.reshape(out.shape)
    out._set_graph(t)
    return out


def _signature(fn):
    inputs, variadic, defaults = [], False, {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            inputs.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            variadic = True
        elif p.kind == p.KEYWORD_ONLY:
            if p.default is p.empty:
                raise InvalidArgumentTypeError(f"operator {fn.__name__}: keyword-only parameter "
                                               f"'{p.name}' needs a default")
            defaults[p.name] = p.default
    return tuple(inputs), variadic, defaults


def _as_array(a, opname):
    if isinstance(a, NDArray):
        return a
    if isinstance(a, np.ndarray):
        return NDArray(torch.from_numpy(np.ascontiguousarray(a)).clone())
    if isinstance(a, torch.Tensor):
        return NDArray(a)
    raise InvalidArgumentTypeError(f"{opname}(): array inputs must be NDArrays, got "
                                   f"{type(a).__name__}; scalars go through the *_scalar "
                                   f"operators or Python operators")


def _check_devices(inputs, opname):
    if len(inputs) > 1 and _MULTI_DEVICE:
        dev = inputs[0].device
        for a in inputs[1:]:
            if a.device != dev:
                raise InvalidArgumentError(f"{opname}(): inputs are on different devices "
                                 f"({Context(dev)} and {Context(a.device)}); move them with "
                                 f".as_in_context()")


def _result_context(inputs):
    """The context of an operator's result when its inputs live on host contexts: the
    first input's, as in MXNet (which lets cpu(0) and cpu(1) arrays meet); None when no
    input carries a context (cpu(0) or an accelerator, which torch tells apart)."""
    for a in inputs:
        if getattr(a, "_ctx", None) is not None:
            return inputs[0].context
    return None


def _place_result(result, ctx):
    for r in (result if isinstance(result, list) else (result,)):
        if isinstance(r, NDArray):
            place(r, ctx)


def _write_out(result, out):
    if isinstance(result, list):
        outs = out if isinstance(out, (list, tuple)) else [out]
        for r, o in zip(result, outs):
            copy_into(r, o)
        return out
    copy_into(result, out)
    return out


def defop(fn=None, *, name=None, num_outputs=1, differentiable=True, aux=(),
          output_names=None, input_inits=None, required_inputs=None):
    """Register an operator from its dense definition (a function on torch tensors).

    Positional parameters are the array inputs (``*args`` for a variadic
    operator); keyword-only parameters, all with defaults, are the operator's
    parameters. The function's docstring is the operator's documentation; the
    storage-type table is appended from the rule rows. The symbol traits
    (``aux``: inputs that are auxiliary states; ``output_names``: a tuple, or a
    function of the bound parameters and the output count; ``input_inits``:
    ``{input: '__init__' attribute}`` of the variables a symbol creates there;
    ``required_inputs``: a function of the parameters naming inputs they make
    required) are described in :mod:`sparsenet.symbol.op_traits`.

    Examples
    --------
    >>> @defop(name="_doc_example_double")
    ... def double(data):
    ...     '''Twice the input.'''
    ...     return data * 2
    >>> import sparsenet as mx
    >>> double(mx.nd.array([1.0, 2.0])).asnumpy()
    array([2., 4.], dtype=float32)
    """
    def make(f):
        return Operator(f, name=name, num_outputs=num_outputs, differentiable=differentiable,
                        aux=aux, output_names=output_names, input_inits=input_inits,
                        required_inputs=required_inputs)
    return make(fn) if fn is not None else make


def numbered_outputs(params, n):
    """MXNet's output names ``output0``, ``output1``, ... (an ``output_names`` for
    :func:`defop`, also when there is one output).

    >>> numbered_outputs({}, 2)
    ['output0', 'output1']
    """
    return [f"output{i}" for i in range(n)]


def rule(op, *stypes, out, when=None, values_grad=False, reads=None):
    """Attach a sparse kernel to ``op`` for the input storage types ``stypes``.

    Parameters
    ----------
    op : Operator
    *stypes : str or Many
        One storage type per array input, or a single :class:`Many` pattern for
        a variadic operator.
    out : str
        Storage type of the result.
    when : dict or callable, optional
        Parameter values under which the row applies: a dict of equalities, or a
        predicate on the parameter dict whose docstring describes it.
    values_grad : bool
        Inside ``record()``, a row_sparse variable input may be differentiated through
        the values the kernel reads (:meth:`Operator._dispatch_values`): the kernel is
        differentiable in its row_sparse inputs' stored values, and the operator's
        derivative with respect to a row the input does not store is zero unless the
        kernel reads that row (``reads``). Then no dense graph tensor is made.
    reads : callable, optional
        ``reads(*arrays, **params)`` -> ``{input position: sorted unique row ids}``: the
        rows of a row_sparse input the kernel reads, stored or not (e.g. ``dot(csr,
        rsp)`` reads the columns the CSR array stores); the gradient goes to exactly
        those rows. Without it, a kernel reads the stored rows only.

    The decorated kernel receives the arrays and every parameter as keywords,
    and returns an NDArray of storage type ``out``.
    """
    pattern = stypes[0] if len(stypes) == 1 and isinstance(stypes[0], Many) else tuple(stypes)

    def register(fn):
        op.add_rule(pattern, out, when, fn, values_grad, reads)
        return fn
    return register


def input_shapes(op):
    """Attach to ``op`` the rule that completes unknown input shapes (symbolic shape inference).

    The decorated function receives the list of input shapes (a tuple, or None
    when unknown) and the parameter dict, and returns the list with the shapes
    it can deduce filled in (e.g. ``FullyConnected``'s weight from ``num_hidden``
    and the data shape). Output shapes come from the dense definition itself.

    >>> from sparsenet.ops.registry import get_op
    >>> get_op('FullyConnected').input_shapes([(8, 5), None, None], {'num_hidden': 3,
    ...                                        'no_bias': False, 'flatten': True})
    [(8, 5), (3, 5), (3,)]
    """
    def register(fn):
        op.input_shapes = fn
        return fn
    return register


def output_shapes(op):
    """Attach to ``op`` the rule giving its output shapes from its input shapes (symbolic
    shape inference), for operators whose dense definition is costly to run on placeholder
    inputs: large inputs go through torch's meta tensors, whose first use imports torch's
    symbolic-shape machinery (a third of a second).

    The decorated function receives the parameter dict and the list of input shapes (all
    known) and returns the list of output shapes.

    >>> from sparsenet.ops.registry import get_op
    >>> get_op('Embedding').output_shapes_for({'output_dim': 4}, [(8, 3), (1000, 4)])
    [(8, 3, 4)]
    """
    def register(fn):
        op.output_shapes_for = fn
        return fn
    return register


def dtype_rule(op):
    """Attach to ``op`` its symbolic type-inference rule (MXNet's ``FInferType``).

    For operators whose dtypes do not simply follow the first input. The
    decorated function receives the list of input dtype names (None when
    unknown) and the parameter dict, and returns ``(input dtypes, output
    dtypes)`` with what it can decide filled in (``Embedding``: the weight is
    the ``dtype`` parameter unless given, the output the weight's dtype,
    whatever the dtype of the ids).

    >>> from sparsenet.ops.registry import get_op
    >>> get_op('Embedding').dtype_rule(['int32', None], {'dtype': 'float32'})
    (['int32', 'float32'], ['float32'])
    """
    def register(fn):
        op.dtype_rule = fn
        return fn
    return register


def get_op(name):
    """Return the registered operator called ``name``.

    >>> get_op('elemwise_add').name
    'elemwise_add'
    """
    try:
        return OPERATORS[name]
    except KeyError:
        raise UnknownOperatorError(f"no operator named {name!r}") from None


def list_ops():
    """Names of all registered operators, sorted."""
    return sorted(n for n in OPERATORS if not n.startswith("_doc_"))


def stype_table():
    """The Markdown storage-type table of every operator with sparse rules (for docs)."""
    lines = ["# Storage-type table", "",
             "Generated from the operator registry by `python tools/gen_stype_table.py`; do not "
             "edit by hand. Each row is one sparse kernel: the input storage types it takes, "
             "the storage type it returns, and the parameters under which it applies. Any "
             "combination not listed falls back: the inputs are densified, the dense kernel "
             "runs, and the storage-fallback policy applies (warn, error or silent).", "",
             "Abbreviations: dns = default (dense), csr = compressed sparse row, "
             "rsp = row_sparse.", "",
             "| operator | inputs | output | when |", "|---|---|---|---|"]
    for name in list_ops():
        for r in OPERATORS[name].rules():
            lines.append(f"| `{name}` | " + " | ".join(r.markdown_cells()) + " |")
    return "\n".join(lines) + "\n"

