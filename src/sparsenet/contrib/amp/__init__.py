"""``mx.contrib.amp``: MXNet 1.9.1's automatic mixed precision entry points (not provided).

See :mod:`sparsenet.contrib.amp.amp`.
"""
from .amp import (convert_bucketing_module, convert_hybrid_block, convert_model, convert_symbol,
                  init, init_trainer, scale_loss, unscale)

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model", "convert_symbol",
           "convert_hybrid_block", "convert_bucketing_module"]
