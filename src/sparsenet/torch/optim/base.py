"""The bridge between ``torch.optim.Optimizer`` and sparsenet's optimizers.

A :class:`BridgedOptimizer` is a ``torch.optim.Optimizer`` whose ``step()``
hands each parameter to an ``mx.optimizer`` instance (one per parameter group):
the parameter is wrapped zero-copy as a dense NDArray, a sparse COO gradient
(``nn.Embedding``/``nn.EmbeddingBag(sparse=True)``) becomes a RowSparseNDArray
(coalesced indices and values, never densified) and a dense gradient a dense
NDArray, and the mx optimizer's ``update`` runs the update operator's rule row.
The update math therefore lives in one place, ``sparsenet.ops.update_rules``.

Every optimizer state lives in ``self.state[param]`` as torch tensors (the mx
states are zero-copy views of them), next to ``'step'``, so torch's own
``state_dict()``/``load_state_dict()`` format applies; ``state_dict()`` first
calls :meth:`BridgedOptimizer.sync`, so it never holds pending catch-ups.

>>> import torch
>>> from sparsenet.torch.optim import SGD
>>> emb = torch.nn.Embedding(4, 2, sparse=True); torch.nn.init.ones_(emb.weight)
Parameter containing:
tensor([[1., 1.],
        [1., 1.],
        [1., 1.],
        [1., 1.]], requires_grad=True)
>>> opt = SGD(emb.parameters(), lr=0.5)
>>> emb(torch.tensor([1])).sum().backward(); opt.step()
>>> emb.weight.detach()[:, 0]
tensor([1.0000, 0.5000, 1.0000, 1.0000])
"""
import abc

import torch

from ...base import InvalidArgumentError, InvalidArgumentTypeError
from ...grad_store import coo_rows
from ...ndarray.ndarray import NDArray
from ...ndarray.row_sparse import RowSparseNDArray
from ...ops.kernels import check_row_ids
from ...optimizer.optimizer import LAZY_MODES
from ..nn import rows_read
from .state_dict import clean_state_dict

__all__ = ["BridgedOptimizer", "to_mx_grad"]

#: How a caller of ``step()`` catches rows up: the exact-mode guard's advice.
CATCH_UP_HINT = ("call opt.attach(model) once before training (forward pre-hooks on every "
                 "nn.Embedding, nn.EmbeddingBag and SparseLinear catch up the rows a batch "
                 "reads), or opt.catch_up(param, ids) with the rows the batch reads before "
                 "each forward pass")


def check_lazy(value):
    """Validate a ``lazy_update`` argument (True, False or 'exact')."""
    if not any(value is mode or (isinstance(mode, str) and value == mode)
               for mode in LAZY_MODES):
        raise InvalidArgumentError(f"lazy_update must be True, False or 'exact', got {value!r}")
    return value


#: the largest hyperparameter accepted: float32's largest finite value (a larger one, as a
#: step's ``alpha`` on a float32 tensor, fails inside torch)
_LARGEST = float(torch.finfo(torch.float32).max)


def check_nonneg(name, value):
    """Raise unless ``value`` is a finite number in [0, float32's largest] (torch's own checks,
    same wording; a bool is not a number here: ``weight_decay=True`` would fail in the step)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0.0 <= value <= _LARGEST:
        raise InvalidArgumentError(f"Invalid {name}: expected a finite number >= 0, got "
                                   f"{value!r}")
    return value


def check_flag(name, value):
    """Raise unless ``value`` is a bool (NumPy's too); return it as a Python bool."""
    if type(value).__name__ not in ("bool", "bool_"):
        raise InvalidArgumentTypeError(f"{name} must be True or False, got "
                                       f"{type(value).__name__} {value!r}")
    return bool(value)


def to_mx_grad(param):
    """``param.grad`` as an NDArray sharing its memory: sparse COO -> RowSparseNDArray.

    >>> import torch
    >>> p = torch.nn.Parameter(torch.zeros(3, 2))
    >>> p.grad = torch.sparse_coo_tensor([[2, 0, 2]], torch.ones(3, 2), (3, 2))
    >>> g = to_mx_grad(p); g.stype, g.indices.asnumpy().tolist()
    ('row_sparse', [0, 2])
    """
    grad = param.grad
    if grad.dtype != param.dtype:
        raise InvalidArgumentTypeError(f"gradient dtype {grad.dtype} differs from the "
                                       f"parameter's {param.dtype}")
    if grad.layout == torch.sparse_coo:
        if grad.sparse_dim() != 1:
            raise InvalidArgumentError(
                f"a sparse gradient must be a COO tensor with sparse_dim=1 (rows, as "
                f"nn.Embedding(sparse=True) gives), got sparse_dim={grad.sparse_dim()} for a "
                f"parameter of shape {tuple(param.shape)}")
        values, rows = coo_rows(grad)
        check_row_ids(rows, param.shape[0], f"sparse COO gradient of a parameter of shape "
                      f"{tuple(param.shape)}", is_sorted=True)
        return RowSparseNDArray._from_parts(values, rows, tuple(param.shape))
    if grad.layout != torch.strided:
        raise InvalidArgumentError(f"gradient layout {grad.layout} is not supported: expected "
                                   f"a dense tensor or a sparse COO tensor with sparse_dim=1")
    return NDArray(grad)


class _Binding:
    """The mx views of one parameter: weight NDArray, mx state, and the tensors behind them."""

    __slots__ = ("param", "weight", "state", "tensors")

    def __init__(self, param, weight, state, tensors):
        self.param, self.weight, self.state, self.tensors = param, weight, state, tensors


def _state_arrays(state):
    if state is None:
        return []
    if isinstance(state, NDArray):
        return [state]
    return [a for s in state for a in _state_arrays(s)]


class BridgedOptimizer(torch.optim.Optimizer, metaclass=abc.ABCMeta):
    """Base class: a ``torch.optim.Optimizer`` that updates through an ``mx.optimizer``.

    Subclasses set :attr:`state_names` (the torch state keys of the mx state's arrays,
    in order) and implement :meth:`make_rule` (build the mx optimizer of a group) and
    :meth:`configure` (copy a group's hyperparameters into it before each step).

    Parameters
    ----------
    params : iterable of tensors or dicts
        As for any ``torch.optim.Optimizer``.
    defaults : dict
        Default hyperparameters of a group; must hold ``lr`` and ``lazy_update``.
    """

    state_names = ()
    #: torch.optim state keys that mean one of ours: ``{torch_key: (our_key, f(t, group))}``
    #: (:mod:`~sparsenet.torch.optim.state_dict`; same-named keys need no entry).
    torch_state = {}
    #: torch.optim group flags and the one value this optimizer implements.
    torch_flags = {}
    #: Whether torch.optim's state of this optimizer may lack ``'step'`` (SGD's does).
    torch_step_optional = False

    def __init__(self, params, defaults):
        check_lazy(defaults["lazy_update"])
        self._rules = {}
        self._bindings = {}
        super().__init__(params, defaults)

    # -- to override ---------------------------------------------------------------
    @abc.abstractmethod
    def make_rule(self, group):
        """Return the ``mx.optimizer`` instance for a parameter group."""

    def configure(self, rule, group):
        """Copy the group's current hyperparameters (``group['lr']``...) into ``rule``."""
        rule.lr = group["lr"]
        rule.wd = group.get("weight_decay", 0.0)

    def prepare(self, rule, group, index, binding, grad):
        """Hook before one parameter's update; returns the gradient to apply."""
        return grad

    def init_state(self, group, binding):
        """Hook after a parameter's mx state is created (e.g. fill an initial value)."""

    def state_keys(self, group):
        """Names of the mx state's arrays in ``self.state[param]`` (in the state's order)."""
        return self.state_names

    def rescale_state(self, rule, group, key, ratio):
        """Multiply state ``key`` of every parameter of ``group`` by ``ratio`` (after a sync).

        Used for momentum kept as ``-lr * buffer`` when ``group['lr']`` changes.
        """
        params = {id(p) for p in group["params"]}
        for binding in self._bindings.values():
            if id(binding.param) in params and key in binding.tensors:
                rule.sync(binding.weight, binding.state)
                binding.tensors[key].mul_(ratio)

    # -- the step ------------------------------------------------------------------
    def _rule(self, gi, group):
        rule = self._rules.get(gi)
        if rule is None or rule[0] is not group:
            check_lazy(group["lazy_update"])
            rule = self._rules[gi] = (group, self.make_rule(group))
            rule[1].exact_guard = CATCH_UP_HINT
        return rule[1]

    def _bind(self, rule, group, index, param):
        binding = self._bindings.get(index)
        st = self.state[param]
        if binding is not None and binding.param is param and binding.weight._t.data_ptr() == \
                param.data_ptr() and all(st.get(k) is t for k, t in binding.tensors.items()):
            return binding
        weight = NDArray(param.detach())
        mx_state = rule.create_state(index, weight)
        arrays = _state_arrays(mx_state)
        tensors = {name: a._t for name, a in zip(self.state_keys(group), arrays)}
        loaded = len(st) > 0
        if loaded:  # states from load_state_dict (or a replaced parameter): copy them in
            # (the new weight view gets a fresh clock; the other parameters of the rule keep
            # theirs: forgetting every clock here lost their skipped steps)
            for name, t in tensors.items():
                t.copy_(st[name])
        step = torch.tensor(float(st["step"]) if "step" in st else 0.0)
        tensors["step"] = step
        rule._index_update_count[index] = int(step.item())
        st.clear()
        st.update(tensors)
        binding = self._bindings[index] = _Binding(param, weight, mx_state, tensors)
        if not loaded:
            self.init_state(group, binding)
        return binding

    def _walk(self):
        index = 0
        for gi, group in enumerate(self.param_groups):
            rule = self._rule(gi, group)
            for param in group["params"]:
                yield rule, group, index, param
                index += 1

    @torch.no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        work = [(rule, group, index, param, to_mx_grad(param))
                for rule, group, index, param in self._walk() if param.grad is not None]
        for rule, group, index, param, grad in work:  # nothing changes if one read stale rows
            self._check_fresh(rule, group, index, param, grad)
        configured = set()
        for rule, group, index, param, grad in work:
            if id(rule) not in configured:
                self.configure(rule, group)
                configured.add(id(rule))
            binding = self._bind(rule, group, index, param)
            grad = self.prepare(rule, group, index, binding, grad)
            rule.update(index, binding.weight, grad, binding.state)
            binding.tensors["step"].fill_(float(rule._index_update_count[index]))
        return loss

    def _check_fresh(self, rule, group, index, param, grad):
        """The exact-mode guard: raise StateError before any update if the forward pass
        read rows of ``param`` that lag behind (see :meth:`catch_up`)."""
        if group["lazy_update"] != "exact":
            return
        binding = self._bindings.get(index)
        if binding is None or binding.param is not param:
            return
        clock = rule._clocks.get(binding.weight)
        if clock is not None:
            rows = grad._indices if grad.stype == "row_sparse" else None
            clock.check_fresh(rule, rows, f"parameter {index} of shape "
                                          f"{tuple(param.shape)}: {CATCH_UP_HINT}",
                              name=type(self).__name__)

    @torch.no_grad()
    def sync_param(self, param):
        """Apply the pending catch-ups of one parameter (``lazy_update='exact'``)."""
        for index, binding in self._bindings.items():
            if binding.param is param:
                rule = self._rules_by_param(param)
                if rule is not None:
                    rule.sync(binding.weight, binding.state)
                return

    @torch.no_grad()
    def sync(self):
        """Apply every pending catch-up (``lazy_update='exact'``); a no-op otherwise.

        Call it before evaluating or reading the weights; :meth:`state_dict` calls it.
        """
        for rule, _, index, param in self._walk():
            binding = self._bindings.get(index)
            if binding is not None and binding.param is param:
                rule.sync(binding.weight, binding.state)

    @torch.no_grad()
    def catch_up(self, param, rows):
        """Bring rows ``rows`` of ``param`` up to date (``lazy_update='exact'``).

        In exact mode a row that skipped steps is stale until it is caught up; the
        forward pass must read caught-up rows for training to equal dense training.
        :meth:`attach` calls this from a forward pre-hook of embedding layers; call it
        yourself (with the batch's ids) for other layers or outside a compiled model.

        Parameters
        ----------
        param : torch.nn.Parameter
        rows : tensor of int
            Row ids (any shape, duplicates allowed).
        """
        for binding in self._bindings.values():
            if binding.param is param:
                rule = self._rules_by_param(param)
                clock = rule._clocks.get(binding.weight) if rule is not None else None
                if clock is not None:
                    idx = rows.reshape(-1).to(device=param.device, dtype=torch.int64)
                    clock.catch_up(rule, binding.weight, binding.state, torch.unique(idx))
                return

    def _rules_by_param(self, param):
        for gi, group in enumerate(self.param_groups):
            if any(p is param for p in group["params"]):
                rule = self._rules.get(gi)
                return rule[1] if rule is not None and rule[0] is group else None
        return None

    def attach(self, module):
        """Register forward pre-hooks that :meth:`catch_up` the rows an embedding reads,
        and state-dict pre-hooks that bring the weights up to date before they are saved.

        Every ``nn.Embedding``, ``nn.EmbeddingBag`` and :class:`sparsenet.torch.nn.SparseLinear`
        inside ``module`` gets a forward pre-hook (a no-op unless its group's ``lazy_update``
        is ``'exact'``); every submodule owning a parameter of this optimizer gets a
        state-dict pre-hook, so ``module.state_dict()`` (what ``torch.save`` writes) holds
        the trained weights, not rows still waiting for their skipped steps. Returns the
        hook handles (``handle.remove()`` detaches).
        """
        handles = []
        mine = {id(p) for group in self.param_groups for p in group["params"]}
        for sub in module.modules():
            if rows_read(sub, None) is not NotImplemented:
                handles.append(sub.register_forward_pre_hook(self._pre_hook))
            if any(id(p) in mine for p in sub._parameters.values() if p is not None):
                register = getattr(sub, "register_state_dict_pre_hook", None) or \
                    sub._register_state_dict_pre_hook
                handles.append(register(self._state_dict_pre_hook))
        return handles

    def _state_dict_pre_hook(self, module, prefix="", keep_vars=False):
        for param in module._parameters.values():
            if param is not None:
                self.sync_param(param)

    def _pre_hook(self, module, args):
        weight = module.weight
        for group in self.param_groups:
            if group["lazy_update"] == "exact" and any(p is weight for p in group["params"]):
                rows = rows_read(module, args[0])
                if rows is not None:
                    self.catch_up(weight, rows)
                return

    def state_dict(self):
        """torch's ``state_dict`` after :meth:`sync` (states are the mx states' tensors)."""
        self.sync()
        return super().state_dict()

    def load_state_dict(self, state_dict):
        """Load a :meth:`state_dict` (or a ``torch.optim`` one whose state means the same:
        see :mod:`sparsenet.torch.optim.state_dict`); the mx states are rebuilt from it at
        the next step.

        Every group key and every state tensor is checked against this optimizer's
        parameters first (shape, floating dtype, ``step`` a whole number):
        :class:`~sparsenet.base.FileFormatError` names the key at fault, and nothing is
        loaded.
        """
        clean = clean_state_dict(self, state_dict)
        self.sync()
        super().load_state_dict(clean)
        self._bindings = {}
        for _, rule in self._rules.values():
            rule._forget_clocks()
