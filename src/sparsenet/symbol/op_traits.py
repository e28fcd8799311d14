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

__all__ = ["aux_inputs", "output_suffixes", "input_inits", "required_inputs", "input_shapes"]

def _trait(op, name):
    return getattr(op, name, None)


def aux_inputs(op):
    """Names of ``op``'s inputs that are auxiliary states (an empty tuple for most)."""
    return tuple(_trait(op, "aux_inputs") or ())


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
