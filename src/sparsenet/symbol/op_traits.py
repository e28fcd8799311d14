"""What a symbol reads from an operator beyond its signature: auxiliary inputs, output names,
the initial value of the variables it creates, and inputs its parameters make required.

Each trait is a declaration on the registry's :class:`~sparsenet.ops.registry.Operator`,
made where the operator is defined (``ops/norm.py`` declares BatchNorm's):

``aux_inputs``
    Names of the inputs that are *auxiliary states*: arrays the operator updates itself
    (BatchNorm's ``moving_mean`` and ``moving_var``). A variable feeding one is listed by
    ``Symbol.list_auxiliary_states()`` instead of ``list_arguments()``, gets no gradient,
    and is saved under an ``aux:`` key.
``output_names``
    The names of the outputs, ``<node>_<name>``: a tuple (the first ``num_outputs`` are
    used) or a function of the bound parameters. Without one: ``output`` for a single
    output, else ``output0``, ``output1``, ... (MXNet's rule).
``input_inits``
    ``{input name: '__init__' attribute}`` given to the variable at that input when it has
    none (MXNet's ``FSetInputVarAttrOnCompose``): BatchNorm's moving statistics start at
    zero and one, PReLU's slopes at 0.25.
``required_inputs``
    A function of the bound parameters returning the inputs that must be present although
    the dense definition gives them a default (``LeakyReLU``'s ``gamma`` for
    ``act_type='prelu'``); the symbol creates them as variables.
``input_shapes``
    The registry's own rule completing unknown input shapes (``@input_shapes(op)``), here
    only for operators that do not declare it yet.
``same_shape``
    ``True`` for elementwise operators whose inputs and output all have one shape (MXNet's
    ``ElemwiseShape``): shape inference fills an unknown input from a known input or from
    the shape a consumer requires of the output (``true_pred - log(prob_target)`` sizes
    ``prob_target``), as MXNet's inference runs both ways.
``dtype_rule``
    The registry's type-inference rule (``@dtype_rule(op)``) for operators whose dtypes do
    not follow their first input: ``Embedding``'s weight and output take its ``dtype``
    parameter, whatever the dtype of the ids.

An operator whose inputs and inference depend on its parameters (``Custom``: its
``op_type`` names a user's property, :mod:`sparsenet.operator.custom`) declares methods:
``input_names_for(params)`` and ``aux_inputs_for(params)`` (its inputs),
``output_shapes_for`` and ``output_stypes_for`` (inference without running the dense
definition on placeholders), ``backward_stypes_for`` (its gradients' storage types),
``create_state(params)`` (a per-node state a program calls instead of the operator) and
``open_params`` (it takes any keyword parameter).

>>> from sparsenet.ops.registry import get_op
>>> aux_inputs(get_op('BatchNorm'))
('moving_mean', 'moving_var')
>>> output_suffixes(get_op('BatchNorm'), {'output_mean_var': True}, 3)
['output', 'mean', 'var']
>>> output_suffixes(get_op('SliceChannel'), {'num_outputs': 1}, 1)
['output0']
>>> output_suffixes(get_op('relu'), {}, 1)
['output']
"""

__all__ = ["aux_inputs", "output_suffixes", "input_inits", "required_inputs", "input_shapes",
           "same_shape", "dtype_rule", "input_names", "output_shapes", "output_stypes",
           "backward_stypes", "node_state", "open_params"]

def _trait(op, name):
    return getattr(op, name, None)


def aux_inputs(op, params=None):
    """Names of ``op``'s inputs that are auxiliary states (an empty tuple for most), under
    the node's ``params``."""
    per_params = _trait(op, "aux_inputs_for")
    if per_params is not None and params is not None:
        return tuple(per_params(params))
    return tuple(_trait(op, "aux_inputs") or ())


def input_names(op, params):
    """Names of ``op``'s inputs under the node's ``params`` (its signature's, for most).

    >>> from sparsenet.ops.registry import get_op
    >>> input_names(get_op('dot'), {})
    ('lhs', 'rhs')
    """
    per_params = _trait(op, "input_names_for")
    return tuple(per_params(params)) if per_params is not None else op.input_names


def output_suffixes(op, params, n):
    """The ``n`` output names of ``op`` under bound ``params`` (without the node name)."""
    names = _trait(op, "output_names")
    if names is None:
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]
    if callable(names):
        return list(names(params, n))
    return list(names[:n])


def input_inits(op):
    """``{input name: '__init__' attribute}`` for the variables at ``op``'s inputs."""
    return dict(_trait(op, "input_inits") or {})


def required_inputs(op, params):
    """Inputs that ``params`` make required although the dense definition has a default.

    >>> from sparsenet.ops.registry import get_op
    >>> required_inputs(get_op('LeakyReLU'), {'act_type': 'prelu'})
    ('gamma',)
    """
    fn = _trait(op, "required_inputs")
    return tuple(fn(params)) if fn is not None else ()


def input_shapes(op):
    """The rule completing ``op``'s unknown input shapes (None: the operator has none).

    >>> from sparsenet.ops.registry import get_op
    >>> input_shapes(get_op('LeakyReLU'))([(4, 3), None], {'act_type': 'prelu'})
    [(4, 3), (3,)]
    """
    return _trait(op, "input_shapes")


def same_shape(op):
    """Whether ``op``'s inputs and output all share one shape (elementwise operators).

    >>> from sparsenet.ops.registry import get_op
    >>> same_shape(get_op('log')), same_shape(get_op('dot'))
    (True, False)
    """
    return bool(_trait(op, "same_shape"))


def dtype_rule(op):
    """The rule giving ``op``'s input and output dtypes (None: dtypes follow the inputs).

    >>> from sparsenet.ops.registry import get_op
    >>> dtype_rule(get_op('Embedding'))(['int32', None], {'dtype': 'float16'})
    (['int32', 'float16'], ['float16'])
    """
    return _trait(op, "dtype_rule")


def output_shapes(op):
    """``fn(params, input shapes) -> output shapes`` of an operator that infers them itself
    (None: its dense definition runs on placeholder inputs)."""
    return _trait(op, "output_shapes_for")


def output_stypes(op):
    """``fn(params, input stypes) -> one storage type per output`` of an operator that
    decides them itself (None: the registry's rule rows decide)."""
    return _trait(op, "output_stypes_for")


def backward_stypes(op):
    """``fn(params, input stypes, output-gradient stype) -> input-gradient stypes``, or None."""
    return _trait(op, "backward_stypes_for")


def node_state(op, params):
    """The state a program node calls instead of the operator (None for stateless ones)."""
    create = _trait(op, "create_state")
    return create(params) if create is not None else None


def open_params(op):
    """Whether ``op`` takes any keyword parameter (``Custom``'s are its property's).

    >>> from sparsenet.ops.registry import get_op
    >>> open_params(get_op('dot')), open_params(get_op('Custom'))
    (False, True)
    """
    return bool(_trait(op, "open_params"))
