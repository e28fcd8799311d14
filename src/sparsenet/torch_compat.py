"""The one boundary with torch's private or positional entry points.

sparsenet calls a few torch functions past their public wrappers on its
per-step paths (the wrappers' argument checks cost more than the work for
small batches). Each such call lives here, next to the public function it
replaces, and falls back to that public function when the private one is
missing (the package supports ``torch>=2.4``). Every other module calls these
names, never ``torch._C`` or ``_``-prefixed tensor methods directly.

>>> import torch
>>> from sparsenet import torch_compat
>>> old = torch.is_grad_enabled()
>>> torch_compat.set_grad_enabled(False); torch.is_grad_enabled()
False
>>> torch_compat.set_grad_enabled(old)
"""
import torch
import torch.nn.functional as F

from .base import ConcurrentModificationError

__all__ = ["set_grad_enabled", "run_backward", "run_grad", "modified_error", "increment_version",
           "coo_parts", "embedding_bag", "node_metadata", "fused_adam", "fused_adam_many",
           "PRIVATE"]


def _lookup(owner, *path):
    obj = owner
    for name in path:
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


#: the private entry points found in this torch (None: the public fallback serves)
PRIVATE = {
    "set_grad_enabled": _lookup(torch, "_C", "_set_grad_enabled"),
    "engine": _lookup(torch, "autograd", "variable", "Variable", "_execution_engine"),
    "engine_run_backward": _lookup(torch, "autograd", "graph", "_engine_run_backward"),
    "increment_version": _lookup(torch, "_C", "_increment_version"),
    "embedding_bag": _lookup(torch, "embedding_bag"),
    "fused_adam": _lookup(torch, "_fused_adam_"),
    "fused_adamw": _lookup(torch, "_fused_adamw_"),
}


def _public_set_grad_enabled(flag):
    torch.set_grad_enabled(flag)


#: set the grad mode (torch.set_grad_enabled as a function, without its context-manager object)
set_grad_enabled = PRIVATE["set_grad_enabled"] or _public_set_grad_enabled


#: torch's message when a tensor saved for backward has been written in place since
_MODIFIED = "modified by an inplace operation"


def modified_error(err):
    """torch's version-counter error as :class:`~sparsenet.base.ConcurrentModificationError`
    (other errors: None).

    >>> modified_error(RuntimeError("one of the variables needed for gradient computation "
    ...                             "has been modified by an inplace operation")).__class__
    <class 'sparsenet.base.ConcurrentModificationError'>
    >>> modified_error(RuntimeError("something else")) is None
    True
    """
    if _MODIFIED not in str(err):
        return None
    return ConcurrentModificationError(
        "backward: an array that the recorded forward pass read (typically a parameter's "
        "weight) was changed in place before this backward pass, so its gradient would be "
        "wrong; the usual cause is a Trainer.step, or another training step, in another "
        "thread sharing the network. Training one network from several threads needs a lock "
        "around each whole iteration (forward, backward and step), or a network per thread "
        f"(torch: {str(err).split('. Hint')[0]})")


def run_backward(outs, grads, retain_graph):
    """Accumulate the gradients of ``outs`` (head gradients ``grads``, shapes already
    matching) into the leaves' ``.grad``, as ``torch.autograd.backward`` does.

    CPU graphs go straight to the engine (no argument checks, no context stash for
    CUDA device threads); otherwise the engine entry behind
    ``torch.autograd.backward``; and without either the public function. An array the
    graph saved and something changed since raises
    :class:`~sparsenet.base.ConcurrentModificationError`.
    """
    try:
        _run_backward(outs, grads, retain_graph)
    except RuntimeError as err:
        mapped = modified_error(err)
        if mapped is None:
            raise
        raise mapped from err


def _run_backward(outs, grads, retain_graph):
    engine, entry = PRIVATE["engine"], PRIVATE["engine_run_backward"]
    if engine is not None and outs[0].is_cpu:
        engine.run_backward(tuple(outs), tuple(grads), bool(retain_graph), False, (),
                            allow_unreachable=True, accumulate_grad=True)
    elif entry is not None:
        entry(tuple(outs), tuple(grads), bool(retain_graph), False, (),
              allow_unreachable=True, accumulate_grad=True)
    else:
        torch.autograd.backward(list(outs), list(grads), retain_graph=retain_graph)


def run_grad(outs, grads, inputs, retain_graph):
    """The gradients of ``outs`` (head gradients ``grads``, shapes already matching) with
    respect to ``inputs``, None for an input they do not reach, as ``torch.autograd.grad``
    with ``allow_unused=True``; nothing is accumulated into ``.grad``. A changed saved array
    raises as in :func:`run_backward`.

    >>> import torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> run_grad([x * 3], [torch.ones(2)], [x], retain_graph=False)[0]
    tensor([3., 3.])
    """
    try:
        return _run_grad(outs, grads, inputs, retain_graph)
    except RuntimeError as err:
        mapped = modified_error(err)
        if mapped is None:
            raise
        raise mapped from err


def _run_grad(outs, grads, inputs, retain_graph):
    engine, entry = PRIVATE["engine"], PRIVATE["engine_run_backward"]
    if engine is not None and outs[0].is_cpu:
        return engine.run_backward(tuple(outs), tuple(grads), bool(retain_graph), False,
                                   tuple(inputs), allow_unreachable=True, accumulate_grad=False)
    if entry is not None:
        return entry(tuple(outs), tuple(grads), bool(retain_graph), False, tuple(inputs),
                     allow_unreachable=True, accumulate_grad=False)
    return torch.autograd.grad(list(outs), list(inputs), list(grads), retain_graph=retain_graph,
                               allow_unused=True)


def _increment_takes_lists():
    """Whether the private ``_increment_version`` takes a list (newer torch) or one tensor."""
    private = PRIVATE["increment_version"]
    if private is None:
        return False
    try:
        private([torch.zeros(1)])
    except (TypeError, RuntimeError):
        return False
    return True


_INCREMENT_LISTS = _increment_takes_lists()


def increment_version(tensors):
    """Bump the autograd version counter of tensors written in place by a native kernel
    (a tensor, or a list or tuple of them).

    >>> t = torch.zeros(2); v = t._version
    >>> increment_version([t]); t._version > v
    True
    """
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors]
    private = PRIVATE["increment_version"]
    if _INCREMENT_LISTS:
        private(tensors)
    elif private is not None:  # torch < 2.5 takes one tensor a call
        for t in tensors:
            private(t)
    else:
        for t in tensors:  # public: an in-place no-op that autograd counts as a write
            with torch.no_grad():
                t.add_(0)


#: :func:`increment_version` for a list or tuple of tensors (the per-step path: the
#: private entry itself where it takes lists)
increment_versions = PRIVATE["increment_version"] if _INCREMENT_LISTS else increment_version


def coo_parts(g):
    """``(indices, values)`` of a sparse COO tensor, coalesced or not, without copies.

    torch's public ``indices()``/``values()`` refuse an uncoalesced tensor; the
    gradients that autograd hands over are uncoalesced, and sparsenet sums their
    duplicates itself.

    >>> g = torch.sparse_coo_tensor([[1, 1]], [2.0, 3.0], (3,))
    >>> [t.tolist() for t in coo_parts(g)]
    [[[1, 1]], [2.0, 3.0]]
    """
    try:
        return g._indices(), g._values()
    except AttributeError:  # pragma: no cover - every supported torch has them
        g = g.coalesce()
        return g.indices(), g.values()


def embedding_bag(weight, ids, offsets, per_sample_weights, sparse):
    """Sum-mode ``embedding_bag`` output (rows of ``weight`` summed per bag), argument
    checks done by the caller.

    >>> w = torch.arange(6.0).reshape(3, 2)
    >>> embedding_bag(w, torch.tensor([0, 2]), torch.tensor([0]), None, False)
    tensor([[4., 6.]])
    """
    private = PRIVATE["embedding_bag"]
    if private is not None:
        return private(weight, ids, offsets, False, 0, sparse, per_sample_weights, False,
                       None)[0]
    return F.embedding_bag(ids, weight, offsets, mode="sum", sparse=sparse,
                           per_sample_weights=per_sample_weights)


def _public_foreach_mul_(tensors, scalar):
    for t in tensors:
        t.mul_(scalar)


def _public_foreach_add_(tensors, others, alpha=1):
    for t, o in zip(tensors, others):
        t.add_(o, alpha=alpha)


#: ``tensors[i] *= scalar`` in one multi-tensor kernel (torch's ``_foreach_mul_``)
foreach_mul_ = getattr(torch, "_foreach_mul_", None) or _public_foreach_mul_
#: ``tensors[i] += alpha * others[i]`` in one multi-tensor kernel (torch's ``_foreach_add_``)
foreach_add_ = getattr(torch, "_foreach_add_", None) or _public_foreach_add_
#: torch's tensor rebuild function named in pickles of tensors (on its own safe-load list)
rebuild_tensor = getattr(getattr(torch, "_utils", None), "_rebuild_tensor_v2", None)


def node_metadata(node):
    """A dict stored on an autograd graph node (None where torch's nodes have none).

    >>> t = torch.ones(1, requires_grad=True)
    >>> isinstance(node_metadata((t * 2).grad_fn), dict)
    True
    """
    try:
        return node.metadata
    except (AttributeError, RuntimeError):
        return None


_FUSED_DTYPES = (torch.float32, torch.float64)
_NO_BIAS_CORRECTION = {}  # device -> an infinite step count (see fused_adam)


def fused_adam(param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay=0.0,
               decoupled=False):
    """One Adam step on one tensor, in place, with torch's fused kernel; False (nothing
    written) where that kernel is missing or does not take these tensors (then the caller
    runs its own kernel, the public fallback).

    The step has no bias correction (the caller folds it into ``lr``)::

        grad' = grad + weight_decay * param       (decoupled: param *= 1 - lr*weight_decay)
        exp_avg = beta1*exp_avg + (1-beta1)*grad'
        exp_avg_sq = beta2*exp_avg_sq + (1-beta2)*grad'**2
        param -= lr * exp_avg / (sqrt(exp_avg_sq) + eps)

    torch's kernel (``torch._fused_adam_`` / ``_fused_adamw_``) corrects the bias with
    ``1 - beta**step``; it is given an infinite step count, for which both corrections
    are exactly 1 (``0 <= beta < 1``). ``grad`` is only read.

    >>> p, g = torch.ones(2), torch.tensor([1.0, -1.0])
    >>> m, v = torch.zeros(2), torch.zeros(2)
    >>> done = fused_adam(p, g, m, v, lr=0.1, beta1=0.9, beta2=0.99, eps=0.0)
    >>> [round(x, 6) for x in p.tolist()] if done else [0.9, 1.1]  # 1 -+ 0.1 * 0.1 / 0.1
    [0.9, 1.1]
    """
    kernel = PRIVATE["fused_adamw" if decoupled else "fused_adam"]
    if kernel is None or not (0.0 <= beta1 < 1.0 and 0.0 <= beta2 < 1.0):
        return False
    dtype, device = param.dtype, param.device
    if dtype not in _FUSED_DTYPES or not param.is_contiguous():
        return False
    for t in (grad, exp_avg, exp_avg_sq):
        if t.dtype != dtype or t.device != device or not t.is_contiguous():
            return False
    step = _NO_BIAS_CORRECTION.get(device)
    if step is None:
        step = _NO_BIAS_CORRECTION[device] = torch.full((), float("inf"), device=device)
    kernel([param], [grad], [exp_avg], [exp_avg_sq], [], [step], lr=float(lr),
           beta1=float(beta1), beta2=float(beta2), weight_decay=float(weight_decay),
           eps=float(eps), amsgrad=False, maximize=False)
    return True


def fused_adam_many(params, grads, exp_avgs, exp_avg_sqs, *, lr, beta1, beta2, eps,
                    weight_decay=0.0, decoupled=False):
    """:func:`fused_adam` on lists of tensors in one call of torch's fused kernel (which
    runs the one-tensor kernel on each in turn: the same bits as one call per tensor);
    return the positions it did not take (nothing written there): those of another
    device or dtype than the first tensor's, or that the kernel does not take.

    >>> ps, gs = [torch.ones(2), torch.ones(3)], [torch.ones(2), torch.ones(3)]
    >>> ms, vs = [torch.zeros(2), torch.zeros(3)], [torch.zeros(2), torch.zeros(3)]
    >>> rest = fused_adam_many(ps, gs, ms, vs, lr=0.1, beta1=0.9, beta2=0.99, eps=0.0)
    >>> rest == [] or rest == [0, 1]
    True
    """
    kernel = PRIVATE["fused_adamw" if decoupled else "fused_adam"]
    if kernel is None or not (0.0 <= beta1 < 1.0 and 0.0 <= beta2 < 1.0) or not params:
        return list(range(len(params)))
    device, dtype, taken, rest = params[0].device, params[0].dtype, ([], [], [], []), []
    for i, ts in enumerate(zip(params, grads, exp_avgs, exp_avg_sqs)):
        if dtype in _FUSED_DTYPES and all(t.dtype == dtype and t.device == device
                                          and t.is_contiguous() for t in ts):
            for lst, t in zip(taken, ts):
                lst.append(t)
        else:
            rest.append(i)
    if taken[0]:
        step = _NO_BIAS_CORRECTION.get(device)
        if step is None:
            step = _NO_BIAS_CORRECTION[device] = torch.full((), float("inf"), device=device)
        kernel(*taken, [], [step] * len(taken[0]), lr=float(lr), beta1=float(beta1),
               beta2=float(beta2), weight_decay=float(weight_decay), eps=float(eps),
               amsgrad=False, maximize=False)
    return rest
