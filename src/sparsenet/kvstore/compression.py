"""MXNet 1.9.1's 2-bit gradient compression: quantise, pack, unpack, dequantise.

``kv.set_gradient_compression({'type': '2bit', 'threshold': t})`` makes a store
send each dense push as one of three values per element. MXNet's rule, per key
and per worker (and, in an in-process store, per device of the push):

1. ``residual += grad`` (the residual starts at zero);
2. where ``residual >= t`` the value sent is ``+t`` and ``residual -= t``;
   where ``residual <= -t`` it is ``-t`` and ``residual += t``; elsewhere ``0``;
3. the receiver sums what the workers sent.

What is not sent stays in the residual and goes out in a later push. The
arithmetic is in float32 (the only dtype MXNet compresses), the threshold a
float32. On the wire each value is a 2-bit code, ``11`` for ``+t``, ``10`` for
``-t``, ``00`` for 0, 16 codes per 32-bit word in MXNet's layout: code ``j`` of a
word sits in byte ``j // 4`` of the word's memory (little-endian), at bits
``7-2*(j%4)`` and ``6-2*(j%4)``. A dense push of ``N`` float32 values thus sends
``4 * ceil(N / 16)`` bytes instead of ``4 * N``.

Row_sparse pushes are refused while compression is set, as MXNet's distributed
store refuses them ("Gradient compression for row sparse storage type is not
supported"; its 'device' store compresses the stored rows as if they were the
first rows of the array, a wrong result).

Examples
--------
>>> import torch
>>> residual = torch.zeros(5)
>>> codes = quantize_2bit(torch.tensor([0.3, 0.6, -0.6, 1.7, -0.2]), residual, 0.5)
>>> dequantize_2bit(codes, 0.5).tolist()
[0.0, 0.5, -0.5, 0.5, 0.0]
>>> [round(r, 4) for r in residual.tolist()]
[0.3, 0.1, -0.1, 1.2, -0.2]
>>> words = pack_2bit(codes)
>>> words.dtype, words.numel()
(torch.int32, 1)
>>> torch.equal(unpack_2bit(words, 5), codes)
True
"""
import math
import numbers

import torch

from ..base import InvalidArgumentError, InvalidArgumentTypeError, StorageTypeError, dtype_name
from ..ndarray.stype import DEFAULT

__all__ = ["COMPRESSION_TYPES", "VALUES_PER_WORD", "CODE_ZERO", "CODE_NEG", "CODE_POS",
           "quantize_2bit", "dequantize_2bit", "pack_2bit", "unpack_2bit", "packed_words",
           "GradientCompression"]

#: The compression types MXNet 1.9.1 knows (its '1bit' came with MXNet 2.0).
COMPRESSION_TYPES = ("2bit",)
#: 2-bit codes per 32-bit word.
VALUES_PER_WORD = 16
#: The 2-bit codes: ``00`` zero, ``10`` minus threshold, ``11`` plus threshold.
CODE_ZERO, CODE_NEG, CODE_POS = 0, 2, 3

# bit offset of code j % 4 inside its byte: the first code takes the two high bits
_SHIFTS = (6, 4, 2, 0)


def _float32(threshold):
    """``threshold`` rounded to float32, as MXNet keeps it (a C float)."""
    return float(torch.tensor(threshold, dtype=torch.float32))


def quantize_2bit(grad, residual, threshold):
    """Add ``grad`` to ``residual`` and take out what is sent: the 2-bit codes, one per value.

    Parameters
    ----------
    grad : torch.Tensor
        The pushed values (any shape with ``residual.numel()`` elements); read only.
    residual : torch.Tensor
        The sender's residual, flat, float32; updated in place.
    threshold : float
        ``t > 0``; rounded to float32.

    Returns
    -------
    torch.Tensor
        uint8 codes, flat: ``CODE_POS`` where ``residual + grad >= t``, ``CODE_NEG``
        where it is ``<= -t``, ``CODE_ZERO`` elsewhere.

    Examples
    --------
    >>> import torch
    >>> res = torch.tensor([0.4, 0.0, -0.3])
    >>> quantize_2bit(torch.tensor([0.1, 0.2, -0.3]), res, 0.5).tolist()
    [3, 0, 2]
    >>> [round(r, 4) for r in res.tolist()]
    [0.0, 0.2, -0.1]
    """
    residual.add_(grad.reshape(-1).to(residual.dtype))
    t = _float32(threshold)
    pos = residual >= t
    neg = residual <= -t
    # pos * t and neg * t are exactly t or 0: residual - t where pos, residual + t where neg
    residual.sub_(pos.to(residual.dtype).mul_(t)).add_(neg.to(residual.dtype).mul_(t))
    return pos.to(torch.uint8).mul_(CODE_POS).add_(neg.to(torch.uint8).mul_(CODE_NEG))


def dequantize_2bit(codes, threshold, dtype=torch.float32):
    """The values the codes stand for: ``+t``, ``-t`` or 0 (a code ``01`` reads 0, as in MXNet).

    Examples
    --------
    >>> import torch
    >>> dequantize_2bit(torch.tensor([3, 2, 0, 1], dtype=torch.uint8), 0.25).tolist()
    [0.25, -0.25, 0.0, 0.0]
    """
    # the high bit says "sent", the low bit the sign: 11 -> +1, 10 -> -1, 0x -> 0
    sign = (codes >> 1).to(torch.int8).mul_((codes & 1).to(torch.int8).mul_(2).sub_(1))
    return sign.to(dtype).mul_(_float32(threshold))


def packed_words(numel):
    """The 32-bit words that ``numel`` 2-bit codes take: ``ceil(numel / 16)``.

    >>> packed_words(16), packed_words(17), packed_words(0)
    (1, 2, 0)
    """
    return -(-int(numel) // VALUES_PER_WORD)


def pack_2bit(codes):
    """Pack 2-bit codes, 16 per int32 word, in MXNet's layout (padding codes are 0).

    Parameters
    ----------
    codes : torch.Tensor
        uint8 values in 0..3, flat.

    Returns
    -------
    torch.Tensor
        int32, ``packed_words(codes.numel())`` words.

    Examples
    --------
    >>> import torch
    >>> w = pack_2bit(torch.tensor([3, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3],
    ...                            dtype=torch.uint8))
    >>> hex(w.item() & 0xFFFFFFFF)  # byte 0 = 0b11100000, byte 3 = 0b00000011
    '0x30000e0'
    """
    n = codes.numel()
    words = packed_words(n)
    padded = torch.zeros(words * VALUES_PER_WORD, dtype=torch.uint8, device=codes.device)
    padded[:n] = codes.reshape(-1)
    shifts = torch.tensor(_SHIFTS, dtype=torch.uint8, device=codes.device)
    quads = padded.reshape(-1, 4) << shifts  # each code moved to its bits; no overlap
    packed = quads[:, 0] | quads[:, 1] | quads[:, 2] | quads[:, 3]
    return packed.view(torch.int32)


def unpack_2bit(words, numel):
    """The first ``numel`` 2-bit codes of packed ``words`` (the inverse of :func:`pack_2bit`).

    Examples
    --------
    >>> import torch
    >>> codes = torch.tensor([3, 0, 2, 3, 3], dtype=torch.uint8)
    >>> unpack_2bit(pack_2bit(codes), 5).tolist()
    [3, 0, 2, 3, 3]
    """
    if words.dtype != torch.int32 or words.dim() != 1 or words.numel() < packed_words(numel):
        raise InvalidArgumentError(f"unpack_2bit: expected a flat int32 tensor of at least "
                                   f"{packed_words(numel)} words for {numel} codes, got "
                                   f"{words.dtype} of shape {tuple(words.shape)}")
    raw = words.contiguous().view(torch.uint8).reshape(-1, 1)
    shifts = torch.tensor(_SHIFTS, dtype=torch.uint8, device=words.device)
    return ((raw >> shifts) & 3).reshape(-1)[:numel]


def _threshold_value(value):
    """``threshold`` of the parameters as a float > 0 (MXNet parses it from a string)."""
    if isinstance(value, bool):
        ok = False
    elif isinstance(value, numbers.Real):
        ok, value = True, float(value)
    elif isinstance(value, str):
        try:
            value, ok = float(value), True
        except ValueError:
            ok = False
    else:
        ok = False
    if not ok:
        raise InvalidArgumentError(f"kvstore set_gradient_compression: invalid parameter format "
                                   f"for threshold, expected a float, got {value!r}")
    if not (value > 0 and math.isfinite(value)):
        raise InvalidArgumentError(f"kvstore set_gradient_compression: threshold must be "
                                   f"greater than 0 (and finite), got {value!r}")
    return value


class GradientCompression:
    """The compression a store applies to dense pushes, and each sender's residual.

    Parameters
    ----------
    type : str
        ``'2bit'``.
    threshold : float
        ``t > 0`` (MXNet's default 0.5).

    Examples
    --------
    >>> import torch
    >>> gc = GradientCompression.from_params({'type': '2bit', 'threshold': 0.5})
    >>> gc
    GradientCompression(type='2bit', threshold=0.5)
    >>> gc.quantized(('w', 0), torch.full((3,), 0.3)).tolist()  # residual 0.3
    [0.0, 0.0, 0.0]
    >>> gc.quantized(('w', 0), torch.full((3,), 0.3)).tolist()  # residual 0.6: send 0.5
    [0.5, 0.5, 0.5]
    """

    def __init__(self, type="2bit", threshold=0.5):
        if type not in COMPRESSION_TYPES:
            raise InvalidArgumentError(f"kvstore set_gradient_compression: unknown type for "
                                       f"gradient compression {type!r}; expected one of "
                                       f"{', '.join(map(repr, COMPRESSION_TYPES))}")
        self.type = type
        self.threshold = _threshold_value(threshold)
        self._residuals = {}

    @classmethod
    def from_params(cls, compression_params):
        """Check ``compression_params`` (MXNet's dict: ``type``, optional ``threshold``) and
        make the compression.

        Raises
        ------
        InvalidArgumentTypeError
            ``compression_params`` is not a dict.
        InvalidArgumentError
            No ``type``, an unknown type, an unknown key, or a threshold that is not a
            float ``> 0``.

        Examples
        --------
        >>> GradientCompression.from_params({'type': '2bit'}).threshold
        0.5
        >>> GradientCompression.from_params({'type': '1bit'})
        Traceback (most recent call last):
        ...
        sparsenet.base.InvalidArgumentError: kvstore set_gradient_compression: unknown type ...
        """
        where = "kvstore set_gradient_compression"
        if not isinstance(compression_params, dict):
            raise InvalidArgumentTypeError(f"{where}: compression_params must be a dict such as "
                                           f"{{'type': '2bit', 'threshold': 0.5}}, got "
                                           f"{type(compression_params).__name__} "
                                           f"{compression_params!r}")
        if "type" not in compression_params:
            raise InvalidArgumentError(f"{where}: required parameter 'type' is not present in "
                                       f"{compression_params!r}; expected e.g. "
                                       f"{{'type': '2bit', 'threshold': 0.5}}")
        unknown = sorted(str(k) for k in compression_params if k not in ("type", "threshold"))
        if unknown:
            raise InvalidArgumentError(f"{where}: unknown parameter(s) {', '.join(unknown)}; "
                                       f"expected 'type' and optionally 'threshold'")
        kind = compression_params["type"]
        if not isinstance(kind, str):
            raise InvalidArgumentError(f"{where}: type must be a str such as '2bit', got "
                                       f"{kind!r}")
        return cls(kind, compression_params.get("threshold", 0.5))

    def adopt_residuals(self, other):
        """Keep ``other``'s residuals (a new ``set_gradient_compression`` keeps them, as MXNet)."""
        if other is not None:
            self._residuals = other._residuals

    def describe(self):
        """What every rank of a distributed push must agree on.

        >>> GradientCompression('2bit', 0.25).describe()
        '2bit threshold=0.25'
        """
        return f"{self.type} threshold={self.threshold!r}"

    def check(self, key, value):
        """Raise unless ``value`` (a push of ``key``) can be compressed: dense and float32.

        Raises
        ------
        StorageTypeError
            A row_sparse (or csr) push.
        InvalidArgumentError
            A dtype other than float32.
        """
        if value.stype != DEFAULT:
            raise StorageTypeError(
                f"kvstore push of key {key!r}: gradient compression for {value.stype} storage "
                f"type is not supported (MXNet 1.9.1 refuses it too); push dense gradients, or "
                f"use a store without set_gradient_compression for row_sparse keys")
        if dtype_name(value.dtype) != "float32":
            raise InvalidArgumentError(
                f"kvstore push of key {key!r}: gradient compression is only supported for "
                f"float32 values, the key holds {dtype_name(value.dtype)}")

    def _residual(self, slot, like):
        res = self._residuals.get(slot)
        if res is None or res.numel() != like.numel() or res.device != like.device:
            res = torch.zeros(like.numel(), dtype=torch.float32, device=like.device)
            self._residuals[slot] = res
        return res

    def codes(self, slot, tensor):
        """Quantise ``tensor`` (a dense push) against the residual of ``slot`` (updated):
        the flat uint8 2-bit codes."""
        return quantize_2bit(tensor, self._residual(slot, tensor), self.threshold)

    def quantized(self, slot, tensor):
        """What the receiver of ``tensor``'s codes reads: a float32 tensor of ``tensor``'s shape
        holding ``+t``, ``-t`` or 0 (the residual of ``slot`` updated)."""
        return dequantize_2bit(self.codes(slot, tensor), self.threshold).reshape(tensor.shape)

    def __repr__(self):
        return f"GradientCompression(type={self.type!r}, threshold={self.threshold!r})"
