"""Learning-rate schedules (``mx.lr_scheduler``): Factor, MultiFactor, Poly, Cosine, with warmup.

A scheduler maps the number of updates done so far, ``num_update`` (the
optimizer's maximum per-parameter update count), to a learning rate. Unlike
MXNet's, these schedulers are pure functions of ``num_update``: calling them
with an earlier count (after loading a checkpoint, or from two optimizers)
gives the earlier rate again, and ``base_lr`` stays the rate you set.

>>> from sparsenet import lr_scheduler
>>> s = lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=1.0)
>>> [s(n) for n in (1, 10, 11, 21)]
[1.0, 1.0, 0.5, 0.25]
"""
import math

from .base import InvalidArgumentError, InvalidArgumentTypeError, UnsupportedError

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


class LRScheduler:
    """Base class: a learning rate as a function of ``num_update``, with optional warmup.

    Parameters
    ----------
    base_lr : float, default 0.01
        The rate the schedule starts from after warmup.
    warmup_steps : int, default 0
        Number of updates spent warming up.
    warmup_begin_lr : float, default 0
        The rate at update 0 of the warmup.
    warmup_mode : {'linear', 'constant'}, default 'linear'
        ``'linear'`` goes from ``warmup_begin_lr`` to ``base_lr`` in equal
        increments; ``'constant'`` stays at ``warmup_begin_lr``.

    Examples
    --------
    >>> s = CosineScheduler(max_update=10, base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2)
    >>> [round(s(n), 3) for n in (0, 2, 4)]
    [0.2, 0.6, 1.0]
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        if not isinstance(warmup_steps, int) or isinstance(warmup_steps, bool):
            raise InvalidArgumentTypeError(f"warmup_steps must be an int, got {warmup_steps!r}")
        if warmup_steps < 0:
            raise InvalidArgumentError(f"warmup_steps must be >= 0, got {warmup_steps}")
        if warmup_begin_lr > base_lr:
            raise InvalidArgumentError(
                f"warmup_begin_lr ({warmup_begin_lr}) must not exceed base_lr "
                f"({base_lr})")
        if warmup_mode not in ("linear", "constant"):
            raise InvalidArgumentError(
                f"warmup_mode must be 'linear' or 'constant', got {warmup_mode!r}")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    @property
    def warmup_final_lr(self):
        """The rate warmup reaches (``base_lr``)."""
        return self.base_lr

    def get_warmup_lr(self, num_update):
        """Rate during warmup (``num_update < warmup_steps``)."""
        if num_update >= self.warmup_steps:
            raise InvalidArgumentError(
                f"update {num_update} is past the {self.warmup_steps} warmup steps")
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        frac = float(num_update) / float(self.warmup_steps)
        return self.warmup_begin_lr + (self.base_lr - self.warmup_begin_lr) * frac

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        return self._schedule(num_update)

    def _schedule(self, num_update):
        raise UnsupportedError(f"{type(self).__name__} must define _schedule(num_update)")

    def __repr__(self):
        return f"{type(self).__name__}(base_lr={self.base_lr})"


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates, never below ``stop_factor_lr``.

    ``lr = max(base_lr * factor ** floor((num_update - 1) / step), stop_factor_lr)``
    (after warmup): the first change happens at update ``step + 1``, as in MXNet.

    Examples
    --------
    >>> s = FactorScheduler(step=2, factor=0.1, stop_factor_lr=0.005, base_lr=1.0)
    >>> [round(s(n), 4) for n in range(1, 8)]
    [1.0, 1.0, 0.1, 0.1, 0.01, 0.01, 0.005]
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise InvalidArgumentError(f"step must be >= 1 update, got {step}")
        if factor > 1.0:
            raise InvalidArgumentError(
                f"factor must be <= 1 so that the rate decreases, got {factor}")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr

    def _schedule(self, num_update):
        k = max(0, (int(num_update) - 1) // self.step)
        lr = self.base_lr * self.factor ** k
        return max(lr, self.stop_factor_lr) if lr < self.base_lr else lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` after each update count listed in ``step``.

    ``lr = base_lr * factor ** (number of s in step with num_update > s)``.

    Examples
    --------
    >>> s = MultiFactorScheduler(step=[2, 5], factor=0.5, base_lr=1.0)
    >>> [s(n) for n in (1, 2, 3, 5, 6)]
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, (list, tuple)) or not step:
            raise InvalidArgumentError(
                f"step must be a non-empty list of update counts, got {step!r}")
        for i, s in enumerate(step):
            if s < 1:
                raise InvalidArgumentError(f"step[{i}] must be >= 1, got {s}")
            if i and s <= step[i - 1]:
                raise InvalidArgumentError(f"step must be strictly increasing, got {list(step)}")
        if factor > 1.0:
            raise InvalidArgumentError(
                f"factor must be <= 1 so that the rate decreases, got {factor}")
        self.step = list(step)
        self.factor = factor

    def _schedule(self, num_update):
        k = sum(1 for s in self.step if num_update > s)
        return self.base_lr * self.factor ** k


class PolyScheduler(LRScheduler):
    """Polynomial decay to ``final_lr`` over ``max_update`` updates.

    After warmup: ``final_lr + (base_lr - final_lr) * (1 - n / N) ** pwr`` with
    ``n = num_update - warmup_steps`` and ``N = max_update - warmup_steps``;
    ``final_lr`` once ``num_update > max_update``.

    Examples
    --------
    >>> s = PolyScheduler(max_update=10, base_lr=1.0, pwr=2)
    >>> [s(n) for n in (0, 5, 10, 20)]
    [1.0, 0.25, 0.0, 0.0]
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_max_update(max_update, warmup_steps)
        self.power = pwr
        self.max_update = max_update
        self.final_lr = float(final_lr)
        self.max_steps = max_update - warmup_steps

    def _schedule(self, num_update):
        if num_update > self.max_update:
            return self.final_lr
        frac = 1.0 - float(num_update - self.warmup_steps) / float(self.max_steps)
        return self.final_lr + (self.base_lr - self.final_lr) * frac ** self.power


class CosineScheduler(LRScheduler):
    """Cosine decay to ``final_lr`` over ``max_update`` updates.

    After warmup: ``final_lr + (base_lr - final_lr) * (1 + cos(pi * n / N)) / 2``
    with ``n`` and ``N`` as in :class:`PolyScheduler`; ``final_lr`` after
    ``max_update``.

    Examples
    --------
    >>> s = CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.1)
    >>> [round(s(n), 3) for n in (0, 5, 10, 11)]
    [1.0, 0.55, 0.1, 0.1]
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_max_update(max_update, warmup_steps)
        self.max_update = max_update
        self.final_lr = float(final_lr)
        self.max_steps = max_update - warmup_steps

    def _schedule(self, num_update):
        if num_update > self.max_update:
            return self.final_lr
        frac = float(num_update - self.warmup_steps) / float(self.max_steps)
        return self.final_lr + (self.base_lr - self.final_lr) * (1 + math.cos(math.pi * frac)) / 2


def _check_max_update(max_update, warmup_steps):
    if not isinstance(max_update, int) or isinstance(max_update, bool):
        raise InvalidArgumentTypeError(f"max_update must be an int, got {max_update!r}")
    if max_update < 1:
        raise InvalidArgumentError(f"max_update must be >= 1, got {max_update}")
    if max_update <= warmup_steps:
        raise InvalidArgumentError(
            f"max_update ({max_update}) must exceed warmup_steps ({warmup_steps})")
