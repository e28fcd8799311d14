"""Closed-form catch-up of Adam-like skipped steps (``lazy_update='exact'``).

With a zero gradient (and no L2 weight decay inside the gradient), one step of
Adam, AdamW or Nadam is::

    m' = beta1 * m;   v' = beta2 * v
    w' = (1 - c) * w - L * m' / (sqrt(v') + e)

with per-step scalars ``L`` (the step's learning rate, bias correction
included), ``c`` (decoupled decay) and ``e`` (the step's epsilon). The weight
drift is linear in ``m / sqrt(v)`` except for ``e``. Expanding
``1/(s + e) = sum_n (-e)^n / s^(n+1)`` (``s = sqrt(v)``) turns the step into a
linear map on the coordinates ``(w, m, v, r_0..r_{N-1})`` with
``r_n = (-eps)^n m / s^(n+1)``; each ``r_n`` decays by
``beta1 / beta2^((n+1)/2)`` per step. The truncation error is below
``(e / (s * beta2^(k/2)))^N`` for a row that skipped ``k`` steps; elements where
that bound exceeds :data:`TOLERANCE` (tiny ``v``) are summed exactly, step by
step in one vectorised pass over their window.

>>> skip_map(0.9, 0.999, L=0.1, c=0.0, ratio=1.0).shape
(7, 7)
"""
import numpy as np
import torch

__all__ = ["ORDER", "TOLERANCE", "skip_map", "encode", "decode", "catch_up"]

ORDER = 4
TOLERANCE = 0.02
_CHUNK = 1 << 21


def skip_map(beta1, beta2, L, c, ratio):
    """Matrix of one zero-gradient step on ``(w, m, v, r_0..r_{ORDER-1})``.

    ``ratio`` is the step's epsilon over the epsilon used to encode ``r_n``.
    """
    n = 3 + ORDER
    a = np.zeros((n, n))
    a[0, 0] = 1.0 - c
    a[1, 1] = beta1
    a[2, 2] = beta2
    for k in range(ORDER):
        rho = beta1 * beta2 ** (-(k + 1) / 2.0)
        a[3 + k, 3 + k] = rho
        a[0, 3 + k] = -L * ratio ** k * rho
    return a


def encode(rows, eps):
    """``[w, m, v]`` rows to the coordinates of :func:`skip_map`."""
    w, m, v = rows
    s = v.sqrt()
    inv = torch.where(s > 0, s.reciprocal(), torch.zeros_like(s))
    comps = [w, m, v]
    r = m * inv
    for _ in range(ORDER):
        comps.append(r)
        r = r * inv * (-eps)
    return comps


def catch_up(maps, rows, window, beta1, beta2, eps):
    """The same result as ``decode(apply_linear(maps, encode(rows)))``, faster: the weight row
    of the map is evaluated as a polynomial in ``-eps / sqrt(v)`` (Horner's rule)."""
    w, m, v = rows
    coefs = maps.to(w.dtype)
    shape = (-1,) + (1,) * (w.dim() - 1)

    def coef(i, k):
        return coefs[:, i, k].view(shape)

    s = v.sqrt()
    inv = torch.where(s > 0, s.reciprocal(), torch.zeros_like(s))
    x = inv * (-eps)
    poly = coef(0, 3 + ORDER - 1).expand_as(w).clone()
    for n in range(ORDER - 2, -1, -1):
        poly.mul_(x).add_(coef(0, 3 + n))
    new_w = (m * inv).mul_(poly).addcmul_(w, coef(0, 0))
    new = [new_w, m * coef(1, 1), v * coef(2, 2)]
    return _exact_fixup(new, rows, s, window, beta1, beta2)


def decode(comps, rows, window, beta1, beta2):
    """Coordinates back to ``[w, m, v]``; elements outside the expansion's range get the
    exact sum over their skipped steps (``window.steps`` hold ``L``, ``c`` and ``e``)."""
    return _exact_fixup([comps[0], comps[1], comps[2]], rows, rows[2].sqrt(), window, beta1,
                        beta2)


def _exact_fixup(new, rows, s0, window, beta1, beta2):
    """Replace the weights of elements outside the expansion's range by the exact sum."""
    w, m, v = new
    m0 = rows[1]
    e_max = max(step["e"] for step in window.steps)
    shape = (-1,) + (1,) * (m0.dim() - 1)
    # per row: below this sqrt(v) the expansion's error bound exceeds TOLERANCE
    floor = (e_max / TOLERANCE) * beta2 ** (-window.gaps.to(s0.dtype) / 2.0)
    mask = (s0 < floor.view(shape)).logical_and_(m0 != 0)
    if bool(mask.any()):
        exact = _exact_weights(rows[0], m0, s0, mask, window, beta1, beta2)
        w = w.masked_scatter(mask, exact.to(w.dtype))
    return [w, m, v]


def _exact_weights(w0, m0, s0, mask, window, beta1, beta2):
    """Step-by-step weight of the masked elements after their skipped steps (float64)."""
    pos = mask.nonzero()
    row = pos[:, 0]
    w, m, s = (t[mask].double() for t in (w0, m0, s0))
    offsets, gaps = window.offsets.index_select(0, row), window.gaps.index_select(0, row)
    series = {key: window.series(key) for key in ("L", "c", "e")}
    out = torch.empty_like(w)
    size = len(window.steps)
    for lo in range(0, w.numel(), max(1, _CHUNK // max(1, size))):
        hi = min(w.numel(), lo + max(1, _CHUNK // max(1, size)))
        k = gaps[lo:hi]
        width = int(k.max())
        j = torch.arange(1, width + 1, device=w.device, dtype=torch.float64)
        valid = j[None, :] <= k[:, None]
        at = (offsets[lo:hi, None] + j[None, :].long() - 1).clamp_(max=size - 1)
        lr, c, e = (series[key][at] for key in ("L", "c", "e"))
        mj = m[lo:hi, None] * beta1 ** j
        sj = s[lo:hi, None] * beta2 ** (j / 2.0)
        term = torch.where(valid, lr * mj / (sj + e), torch.zeros_like(mj))
        logd = torch.where(valid, torch.log1p(-c), torch.zeros_like(c))
        after = logd.flip(1).cumsum(1).flip(1) - logd
        out[lo:hi] = w[lo:hi] * logd.sum(1).exp() - (term * after.exp()).sum(1)
    return out
