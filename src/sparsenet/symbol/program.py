"""A Symbol compiled for given input storage types: its operator calls, in order.

Compiling infers each node's storage decision from the registry rows (the
rows the eager call dispatches on), reports each node that will fall back to
the dense kernel once (``sparsenet.config`` policy: a warning per node, an
error, or nothing), and lays the graph out as a list of steps over numbered
slots: the inputs first (arguments, then auxiliary states), then every node
output. Running a program calls each step's operator on the arrays in its
slots, in the caller's autograd state, so the executor and a hybridized Gluon
block record their graphs like imperative calls. What the plan settles once per
input signature is not redone per call: a node that runs on dense inputs with no
rule row to choose calls the operator's dense definition directly (the registry's
dense fast path, without its per-call checks); the other nodes dispatch.

Set ``MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING=1`` (or
``SPARSENET_INFER_STORAGE_TYPE_VERBOSE_LOGGING=1``) to log, at compile time,
each node's operator, input and output storage types and whether it dispatches
a sparse kernel, the dense kernel or a storage fallback (logger
``sparsenet.executor``).

>>> import sparsenet as mx
>>> prog = Program(mx.sym.var('x') * 2 + 1, {'x': 'default'})
>>> prog.run([mx.nd.array([1.0, 2.0])])[0].asnumpy()
array([3., 5.], dtype=float32)
"""
import logging
import os
import sys

from .. import config
from ..ndarray.ndarray import wrap
from .infer import DENSE, FALLBACK, arg_storage_types, storage_plan
from .op_traits import node_state

__all__ = ["Program", "input_names"]

_VERBOSE_ENV = ("SPARSENET_INFER_STORAGE_TYPE_VERBOSE_LOGGING",
                "MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING")
logger = logging.getLogger("sparsenet.executor")


def _verbose():
    return any(os.environ.get(k, "0").strip() not in ("", "0") for k in _VERBOSE_ENV)


def _log(msg):
    if not logger.hasHandlers():  # MXNet always prints these; do not rely on logging config
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[sparsenet.executor] %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    logger.info(msg)


def input_names(symbol):
    """The slots a program reads, in order: the arguments, then the auxiliary states.

    >>> import sparsenet as mx
    >>> input_names(mx.sym.BatchNorm(mx.sym.var('x'), name='bn'))
    ['x', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var']
    """
    args, aux = symbol._split_inputs()
    return [n.name for n in args] + [n.name for n in aux]


class _Step:
    """One operator node, compiled: operator, bound parameters, input and output slots.

    ``dense`` is the operator's dense definition where the plan runs the node on dense
    inputs (the registry's dense fast path decides per call whether it applies); None
    where the call dispatches.
    """

    __slots__ = ("op", "params", "inputs", "outputs", "fallback", "node", "single", "state",
                 "dense", "dispatch")

    def __init__(self, node, inputs, outputs, decision):
        self.node = node
        op = self.op = node.op
        self.params = op.bind_params(node.params)
        self.state = node_state(op, self.params)  # a custom operator's, else None
        self.fallback = decision.dispatch == FALLBACK
        self.inputs, self.outputs = tuple(inputs), tuple(outputs)
        self.single = outputs[0] if len(outputs) == 1 else None
        self.dispatch = op._dispatch
        # a node the plan runs on dense inputs may call the dense definition directly; the
        # registry (Operator._dense_tensors) says at each call whether it can
        self.dense = op.fn if (self.state is None and decision.dispatch == DENSE) else None


class Program:
    """A Symbol compiled for given input storage types (see the module docstring).

    Parameters
    ----------
    symbol : Symbol
    input_stypes : dict of str to str
        Storage type of each input (argument or auxiliary state) by name; inputs
        not given take their Variable's ``stype``, else 'default'.

    Attributes
    ----------
    names : list of str
        The inputs :meth:`run` takes, in order (:func:`input_names`).
    plan : list of NodeStorage
        Each operator node's storage decision.
    out_slots, out_stypes : list
        Where each output of the symbol lies, and its storage type.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.sym.var('x', stype='csr')
    >>> prog = Program(mx.sym.dot(x, mx.sym.var('w')), {})
    >>> prog.names, prog.out_stypes, prog.plan[0].dispatch
    (['x', 'w'], ['default'], 'sparse kernel')
    """

    def __init__(self, symbol, input_stypes):
        names = input_names(symbol)
        stypes = arg_storage_types(symbol, input_stypes)
        self.plan, entry_stypes = storage_plan(symbol, stypes)
        slots = {n: i for i, n in enumerate(names)}
        nslots = len(names)
        steps = []
        verbose = _verbose()
        nodes = symbol._nodes()
        logged = 0
        for decision in self.plan:
            node = decision.node
            ins = [slots[c.name] if c.op is None else slots[(id(c), i)] for c, i in node.inputs]
            outs = []
            for i in range(node.num_outputs()):
                slots[(id(node), i)] = nslots
                outs.append(nslots)
                nslots += 1
            fallback = decision.dispatch == FALLBACK
            while verbose and nodes[logged] is not node:  # variables, in graph order
                if nodes[logged].op is None:
                    _log(f"node {logged} var '{nodes[logged].name}': "
                         f"{stypes[nodes[logged].name]}")
                logged += 1
            if verbose:
                _log(f"node {logged} {node.op.name} '{node.name}': "
                     f"{decision.dispatch}; inputs ({', '.join(decision.in_stypes)}) -> "
                     f"outputs ({', '.join(decision.out_stypes)})")
                logged += 1
            if fallback:
                config.report_fallback(node.op.name, decision.in_stypes,
                                       detail=f" at symbol node '{node.name}'",
                                       key=("symbol node", node.name, id(node)), count=False)
            steps.append(_Step(node, ins, outs, decision))
        self.names = names
        self.steps = steps
        self.num_inputs = len(names)
        self._free_slots = [None] * (nslots - len(names))
        self._has_fallback = any(st.fallback for st in steps)
        self.out_slots = [slots[n.name] if n.op is None else slots[(id(n), i)]
                          for n, i in symbol._outputs]
        self.out_stypes = [entry_stypes[n.name] if n.op is None else entry_stypes[(id(n), i)]
                           for n, i in symbol._outputs]

    def run(self, arrays):
        """The outputs for input ``arrays`` (in :attr:`names` order).

        Runs in the caller's autograd state, as the eager operators do: the
        caller's ``autograd.record()`` records the graph, torch's ``no_grad``
        is respected.
        """
        values = list(arrays)
        values += self._free_slots
        # each falling-back node was warned about once, when compiled
        quiet = self._has_fallback and config.get_storage_fallback() == "warn"
        step = None
        try:
            for step in self.steps:
                inputs = [values[s] for s in step.inputs]
                tensors = None if step.dense is None else step.op._dense_tensors(inputs)
                if tensors is not None:
                    res = step.dense(*tensors, **step.params)
                    result = ([wrap(t) for t in res] if isinstance(res, (tuple, list))
                              else wrap(res))
                elif step.fallback and quiet:
                    with config.storage_fallback("silent"):
                        result = step.dispatch(inputs, step.params)
                elif step.state is not None:
                    result = step.state(inputs)
                else:
                    result = step.dispatch(inputs, step.params)
                if step.single is not None and not isinstance(result, list):
                    values[step.single] = result
                else:
                    for s, r in zip(step.outputs, result):
                        values[s] = r
        except (ValueError, TypeError, IndexError) as e:
            located = _at_node(e, step.node)
            if located is e:
                raise
            raise located from e
        return [values[s] for s in self.out_slots]


def _at_node(error, node):
    """``error`` with the symbol node it came from appended to its message."""
    try:
        return type(error)(f"{error} (operator {node.op.name} at symbol node '{node.name}')")
    except Exception:  # an exception class with another constructor: keep it as it is
        return error
