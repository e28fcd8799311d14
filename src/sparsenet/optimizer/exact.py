"""Bookkeeping for ``lazy_update='exact'``: which step each row was last brought up to date.

A :class:`RowClock` belongs to one weight. Each lazy step records the
optimizer's *skip map*, the zero-gradient step written as a matrix acting on a
row's coordinates (weight, momentum, moments, or derived coordinates such as
``m/sqrt(v)``). The clock keeps, for every offset ``j`` in the current window,
the product of the maps from step ``base+1+j`` to the latest step, so a row that
was last current at step ``a`` catches up with one gathered ``(n, n)`` matrix:
``rows <- Q[a - base] @ rows``. The products are updated in place when a step
is recorded (one batched matrix product over the window, no inverses, so no
loss of precision however far a row lags). When the window reaches
``Optimizer.exact_window`` steps, or on ``sync``, every stale row catches up and
the window restarts.

>>> import torch
>>> clock = RowClock(4, torch.device('cpu'))
>>> clock.step, clock.window_full(1)
(0, False)
"""
import weakref

import numpy as np
import torch

from ..base import InvalidArgumentError, StateError
from ..ops.update_rules.core import full_rows, row_chunks

__all__ = ["RowClock", "Window", "apply_linear", "ClockTable"]

class ClockTable:
    """The :class:`RowClock` of each weight, keyed by the weight object's identity.

    (NDArray ``==`` is elementwise, so a ``WeakKeyDictionary`` cannot hold
    arrays.) An entry disappears when its weight is garbage-collected.

    >>> import sparsenet as mx
    >>> table = ClockTable(); w = mx.nd.ones((2, 1))
    >>> table.get(w) is None, table.setdefault(w).rows, table.get(w) is not None
    (True, 2, True)
    """

    def __init__(self):
        self._items = {}

    def get(self, weight):
        item = self._items.get(id(weight))
        if item is None or item[0]() is not weight:
            return None
        return item[1]

    def setdefault(self, weight):
        clock = self.get(weight)
        if clock is None:
            key = id(weight)
            ref = weakref.ref(weight, lambda _r, k=key, items=self._items: items.pop(k, None))
            clock = RowClock(weight.shape[0], weight.context.torch_device)
            self._items[key] = (ref, clock)
        return clock

    def clear(self):
        self._items.clear()

    def __len__(self):
        return len(self._items)


class Window:
    """The skipped steps of the rows being caught up.

    Attributes
    ----------
    steps : list of dict
        Hyperparameters of each recorded step since the window began (oldest
        first); ``steps[-1]`` is the latest step.
    offsets : torch.Tensor
        Per row, the index in ``steps`` of its first skipped step.
    gaps : torch.Tensor
        Per row, the number of skipped steps (``len(steps) - offsets``).
    """

    __slots__ = ("steps", "offsets", "gaps")

    def __init__(self, steps, offsets):
        self.steps = steps
        self.offsets = offsets
        self.gaps = len(steps) - offsets

    def series(self, key):
        """Float64 tensor of ``step[key]`` over the window (on the rows' device)."""
        return torch.tensor([s[key] for s in self.steps], dtype=torch.float64,
                            device=self.offsets.device)


def apply_linear(maps, comps):
    """Per-row matrix times coordinates: ``out[i] = sum_k maps[:, i, k] * comps[k]``.

    ``maps`` is ``(R, n, n)``; each coordinate is ``(R, ...)``. Entries that
    are zero for every row are skipped.

    >>> m = torch.tensor([[[2.0, 1.0], [0.0, 3.0]]], dtype=torch.float64)
    >>> [c.tolist() for c in apply_linear(m, [torch.tensor([[1.0]]), torch.tensor([[1.0]])])]
    [[[3.0]], [[3.0]]]
    """
    n = maps.shape[1]
    nonzero = (maps != 0).any(dim=0).tolist()
    coefs = maps.to(comps[0].dtype)
    shape = (-1,) + (1,) * (comps[0].dim() - 1)
    out = []
    for i in range(n):
        acc = None
        for k in range(n):
            if not nonzero[i][k]:
                continue
            coef = coefs[:, i, k].view(shape)
            acc = comps[k] * coef if acc is None else acc.addcmul_(comps[k], coef)
        out.append(acc if acc is not None else torch.zeros_like(comps[i]))
    return out


class RowClock:
    """Per-row last-update steps and the products of skipped-step maps of one weight."""

    def __init__(self, rows, device):
        self.rows = rows
        self.step = 0
        self.base = 0
        self.last = torch.zeros(rows, dtype=torch.int64, device=device)
        self.steps = []
        self.maps = None  # (n, capacity, n) float64 products; None while every map is identity
        self.device = device

    def window_full(self, limit):
        """True when the window holds ``limit`` steps (time for a full catch-up)."""
        return len(self.steps) >= limit

    def pending(self, opt):
        """True when catching a lagging row up would change it (some skipped step is not
        the identity, or the optimizer's catch-up recomputes rows)."""
        return bool(self.steps) and (self.maps is not None or opt._exact_nonlinear)

    @torch.no_grad()
    def check_fresh(self, opt, idx, hint, name=None):
        """Raise :class:`~sparsenet.base.StateError` if a row of ``idx`` (all rows when
        ``idx`` is None) lags behind: a forward pass read it before it was caught up.

        ``hint`` says how the caller's API catches rows up before the forward pass.
        """
        if not self.pending(opt):
            return
        last = self.last if idx is None else self.last.index_select(0, idx)
        lag = last.clamp(min=self.base) < self.step
        if not bool(lag.any()):
            return
        rows = torch.arange(self.rows, device=lag.device) if idx is None else idx
        stale = rows[lag]
        first = int(stale[0])
        behind = self.step - max(int(self.last[first]), self.base)
        raise StateError(
            f"{name or type(opt).__name__}(lazy_update='exact'): the gradient touches "
            f"{stale.numel()} row(s) of a weight of {self.rows} rows that were not brought up to date before "
            f"the forward pass read them (row {first} is {behind} step(s) behind), so that "
            f"forward pass used stale values and the update would drift from the dense "
            f"result; {hint}")

    @torch.no_grad()
    def catch_up(self, opt, weight, state, idx, hint=None):
        """Apply the skipped steps to rows ``idx`` of ``weight`` and ``state``.

        With ``hint`` (the exact-mode guard), lagging rows raise instead: see
        :meth:`check_fresh`.
        """
        if not self.steps or idx.numel() == 0:
            return
        if hint is not None:
            self.check_fresh(opt, idx, hint)
        a = self.last.index_select(0, idx).clamp_(min=self.base)
        stale = (a < self.step).nonzero().view(-1)
        if stale.numel() == 0:
            return
        rows = idx.index_select(0, stale)
        self._apply(opt, weight, state, rows, a.index_select(0, stale))
        self.last.index_fill_(0, rows, self.step)

    @torch.no_grad()
    def sync(self, opt, weight, state):
        """Bring every stale row up to date and restart the window."""
        if self.steps:
            last = self.last.clamp(min=self.base)
            stale = (last < self.step).nonzero().view(-1)
            if stale.numel():
                self._apply(opt, weight, state, stale, last.index_select(0, stale))
        self._restart()

    def record(self, opt, skip, step, idx):
        """Record a lazy step (its skip map and hyperparameters); rows ``idx`` are current."""
        a = torch.as_tensor(np.asarray(skip, dtype=np.float64), device=self.device)
        n = a.shape[0]
        if self.maps is not None and self.maps.shape[0] != n:
            raise InvalidArgumentError(f"{type(opt).__name__}: the skip map changed size from "
                                       f"{self.maps.shape[0]} to {n} inside a window")
        if self.maps is not None or not torch.equal(a, torch.eye(n, dtype=a.dtype,
                                                                 device=a.device)):
            used = len(self.steps) + 1
            if self.maps is None or self.maps.shape[1] < used + 1:
                self._grow(n, used, max(2 * used, 64))
            # maps[:, j, :] is the product for offset j: left-multiplying every product by the
            # new step is one (n, n) @ (n, used * n) matrix product on a contiguous view
            view = self.maps[:, :used, :].reshape(n, used * n)
            view.copy_(a @ view)
            self.maps[:, used, :] = torch.eye(n, dtype=a.dtype, device=a.device)
        self.steps.append(dict(step))
        self.step += 1
        if idx.numel():
            self.last.index_fill_(0, idx, self.step)

    def _grow(self, n, used, capacity):
        """(Re)allocate the ``(n, capacity, n)`` product buffer keeping the first ``used``."""
        eye = torch.eye(n, dtype=torch.float64, device=self.device)
        buf = eye[:, None, :].expand(n, capacity, n).clone()
        if self.maps is not None:
            buf[:, :used, :] = self.maps[:, :used, :]
        self.maps = buf

    def _window_maps(self, offsets):
        """``(R, n, n)`` products for the given window offsets."""
        return self.maps.index_select(1, offsets).permute(1, 0, 2)

    def record_all(self, step):
        """Record a step that updated every row (dense or standard step)."""
        self.step += 1
        self._restart()

    def _restart(self):
        # every row is current as of ``base``: a row's step is max(last[row], base)
        self.base = self.step
        self.steps = []
        self.maps = None

    def _apply(self, opt, weight, state, idx, a):
        if self.maps is None and not opt._exact_nonlinear:
            return
        name = type(opt).__name__
        arrays = [full_rows(x, name, "weight" if x is weight else "state")
                  for x in opt._exact_arrays(weight, state)]
        for part in row_chunks(idx.numel(), arrays[0]):
            sel, start = idx[part], a[part]
            rows = [t.index_select(0, sel) for t in arrays]
            window = Window(self.steps, start - self.base)
            maps = None if self.maps is None else self._window_maps(window.offsets)
            new = opt._exact_apply(maps, rows, window)
            for t, r in zip(arrays, new):
                t.index_copy_(0, sel, r.to(t.dtype))
