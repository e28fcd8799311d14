"""``sparsenet demo``: seed 000's "Sparse NDArrays with Gluon" walkthrough (``make demo``).

1. Generate the tutorial's 1,000 x 1,000,000 CSR dataset (density 1e-5; ``--rows`` and
   ``--features`` change the size) and compare its memory with the dense equivalent.
2. Write it as LibSVM (the tutorial's ``save_as_libsvm``) and read it back in
   batches with ``LibSVMIter``.
3. Train the tutorial's three networks for one epoch each (``nn.Dense`` on CSR,
   ``FullyConnectedSparse`` with a dense and with a row_sparse weight gradient),
   printing the epoch time and the memory of weights and gradients.
4. Train the same model in plain PyTorch (``EmbeddingBag(sparse=True)``) for
   comparison, and show storage-type inference on a few operators.

The data are generated from ``--seed`` (NumPy), so two runs print the same
data summary; the times vary.
"""
import argparse
import os
import sys
import time
import warnings

from ..base import InvalidArgumentError, SparsenetError
from .arg_types import density, int_in, positive_int

# Building the parser imports no NumPy, SciPy or torch (``sparsenet --help`` answers at
# once): each function below imports what it uses.

__all__ = ["add_parser", "run", "generate"]

_DESCRIPTION = """\
Seed 000's "Sparse NDArrays with Gluon" walkthrough, on data it generates itself: a CSR
dataset and its memory against dense, a LibSVM round trip through LibSVMIter, one epoch of
each of the tutorial's three networks (nn.Dense on CSR, FullyConnectedSparse with a dense
and a row_sparse weight gradient), the same model in plain PyTorch, and storage-type
inference on a few operators. Files go to --out."""


def generate(rows, features, density, seed):
    """The tutorial's random CSR data (values in [0, 1)) and labels (row sum above the mean).

    >>> data, label = generate(4, 100, 0.05, seed=0)
    >>> data.stype, data.shape, label.shape
    ('csr', (4, 100), (4,))
    """
    # on first use: not imported to build the parser
    import numpy as np
    import scipy.sparse  # on first use (start-up)

    from .. import ndarray as nd  # on first use (start-up)

    rng = np.random.default_rng(seed)
    matrix = scipy.sparse.random(rows, features, density=density, format="csr",
                                 dtype=np.float32, random_state=rng)
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    label = (sums > sums.mean()).astype(np.float32)
    return nd.sparse.csr_matrix(matrix), nd.array(label)


def train_epoch(net, data_iter, ctx):
    """One epoch of the tutorial's training loop (SGD, sigmoid cross-entropy); seconds."""
    from .. import autograd, gluon  # on first use: imports torch

    trainer = gluon.Trainer(net.collect_params(), 'sgd')
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    data_iter.reset()
    start = time.perf_counter()
    for batch in data_iter:
        data = batch.data[0].as_in_context(ctx)
        label = batch.label[0].as_in_context(ctx)
        with autograd.record():
            pred = net(data)
            loss = loss_fn(pred, label)
        loss.backward()
        trainer.step(data.shape[0])
        loss.wait_to_read()
    return time.perf_counter() - start


def torch_epoch_time(data_iter, num_features):
    """One epoch of the same model in plain PyTorch, fed the same CSR batches (zero-copy)."""
    # on first use: not imported to build the parser
    import torch

    from ._seed000 import TorchModel, torch_batches, torch_epoch  # on first use (start-up)

    torch.manual_seed(0)
    model = TorchModel(num_features)
    optim = torch.optim.SGD(model.parameters(), lr=0.01)
    data_iter.reset()
    batches = torch_batches([(b.data[0], b.label[0]) for b in data_iter])
    start = time.perf_counter()
    torch_epoch(model, optim, batches, torch.nn.BCEWithLogitsLoss())
    return time.perf_counter() - start


def _storage_inference():
    from .. import config, ndarray as nd  # on first use: imports torch

    print("\n== Storage-type inference")
    x = nd.sparse.csr_matrix(([7.0, 8.0, 9.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
    g = nd.dot(x, nd.ones((3, 2)), transpose_a=True)
    cases = [("dot(csr, dense)", nd.dot(x, nd.ones((5, 2)))),
             ("dot(csr.T, dense)", g),
             ("row_sparse * 2", g * 2),
             ("row_sparse + dense", g + nd.ones((5, 2))),
             ("csr + csr", x + x),
             ("sqrt(csr)", nd.sqrt(x)),
             ("sum(csr, axis=1)", nd.sum(x, axis=1))]
    for name, out in cases:
        print(f"  {name:<22} -> {out.stype}")
    print("\n== Storage fallback (the demonstration: one warning is expected)")
    print("  log(row_sparse) has no sparse kernel (log(0) is not 0): its input is densified,")
    print("  and the policy 'warn' says so once per operator and storage types:")
    with config.storage_fallback("warn"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", config.StorageFallbackWarning)
        config.reset_fallback_counts()
        line = sys._getframe().f_lineno + 1
        nd.log(g)  # the demonstration's one storage fallback
    sys.stdout.flush()
    for w in seen:  # the fallback is attributed to the line above, not to the demo's caller
        ours = issubclass(w.category, config.StorageFallbackWarning)
        warnings.warn_explicit(w.message, w.category, __file__ if ours else w.filename,
                               line if ours else w.lineno)
    sys.stderr.flush()
    print("\nFallbacks seen:\n" + config.fallback_report())
    print(f"The one warning above is this demonstration's, raised by nd.log(g) at "
          f"{os.path.basename(__file__)}:{line};\nnothing is wrong with your setup. Your own "
          f"code gets one such warning per fallback\n(SPARSENET_STORAGE_FALLBACK=error makes "
          f"it an error, =silent hides it).")


def _next_steps(out, num_features):
    print("\n== Where to go next")
    data = os.path.join(out, "dataset.libsvm")
    print(f"  The command line, on the file this demo wrote:\n"
          f"    sparsenet inspect {data}\n"
          f"    sparsenet train {data} --features {num_features} --out {out}/model --plot\n"
          f"    sparsenet --help    (train, eval, predict, inspect, convert, launch)")
    print("  The user guide: docs/user_guide.md (or make docs, then docs/_build/html/index.html);\n"
          "  the command line: docs/cli.md; plain PyTorch: docs/pytorch_users.md; from MXNet:\n"
          "  docs/migrating_from_mxnet.md; runnable examples: examples/gallery/.")


def walkthrough(out, num_samples, num_features, density, seed, batch_size):
    """Print the walkthrough; write its LibSVM file under ``out``."""
    # on first use: not imported to build the parser
    import numpy as np

    from .. import gluon  # on first use (start-up)
    from ..context import cpu, gpu, num_gpus  # on first use (start-up)
    from ..io import LibSVMIter  # on first use (start-up)
    from ._seed000 import VARIANTS, build_net, save_as_libsvm  # on first use (start-up)

    os.makedirs(out, exist_ok=True)
    print("== Generating sparse data")
    data, label = generate(num_samples, num_features, density, seed)
    print(type(data).__name__, data.shape)
    print("{:,.0f} elements".format(np.prod(data.shape)))
    print("{:,.0f} non-zero elements".format(data.data.size))
    dense_bytes = num_samples * num_features * np.dtype(np.float32).itemsize
    print("NDArray (dense):", dense_bytes / 1e6, "MBs (computed from the shape; not allocated)")
    print("CSRNDArray:", data.nbytes / 1e6, "MBs")

    print("\n== Writing and reading LibSVM")
    filepath = os.path.join(out, "dataset.libsvm")
    save_as_libsvm(filepath, data, label)
    with open(filepath) as f:
        for _ in range(3):
            line = f.readline()
            print(line[:80] + '...' if len(line) > 80 else line.rstrip())
    print(f"{filepath}: {os.path.getsize(filepath) / 1e3:.0f} KB")
    data_iter = LibSVMIter(data_libsvm=filepath, data_shape=(num_features,), label_shape=(1,),
                           batch_size=batch_size)
    batch = next(iter(data_iter))
    print("data.stype:", batch.data[0].stype, " label.stype:", batch.label[0].stype)
    print("sparse batch:", batch.data[0].nbytes / 1e6, "MBs;  dense batch:",
          batch.data[0].shape[0] * num_features * 4 / 1e6, "MBs")

    ctx = gpu() if num_gpus() else cpu()
    print(f"\n== Training one epoch of each network on {ctx}")
    for variant, name in VARIANTS.items():
        net = build_net(variant, num_features, ctx)
        seconds = train_epoch(net, data_iter, ctx)
        print(f"\n-- {name}: {seconds * 1e3:.1f} ms per epoch")
        gluon.utils.print_memory_allocation(net, block_idxs=[0, 2, 4])
        del net
    seconds = torch_epoch_time(data_iter, num_features)
    print(f"\n-- PyTorch EmbeddingBag(sparse=True) + SGD: {seconds * 1e3:.1f} ms per epoch")
    _storage_inference()
    _next_steps(out, num_features)


def add_parser(subparsers):
    """Add the ``demo`` subparser to ``subparsers`` and return it.

    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> args = add_parser(sub).parse_args(["--rows", "50"])
    >>> args.rows, args.features, args.out
    (50, 1000000, 'demo_output')
    """
    parser = subparsers.add_parser(
        "demo", help="seed 000's sparse Gluon walkthrough on generated data (make demo)",
        description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="demo_output", metavar="DIR",
                        help="folder for the generated LibSVM file (default: demo_output)")
    parser.add_argument("--rows", type=positive_int, default=1000, metavar="N",
                        help="rows of the generated data (default: 1000, the tutorial's)")
    parser.add_argument("--features", type=positive_int, default=1000000, metavar="N",
                        help="columns of the generated data (default: 1,000,000)")
    parser.add_argument("--density", type=density, default=1e-5,
                        help="fraction of stored values (default: 1e-5)")
    parser.add_argument("--batch-size", type=positive_int, default=10, metavar="N",
                        help="rows per batch (default: 10)")
    parser.add_argument("--seed", type=int_in(0, 2 ** 64 - 1), default=42,
                        help="NumPy seed of the data (default: 42)")
    return parser


def needed_bytes(rows, features, density_):
    """About the memory the walkthrough takes: the generated values with their int64 indices
    (and SciPy's sampling of their positions), and the networks' ``(features, 128)``
    weight with a dense gradient and a copy."""
    nnz = rows * features * density_
    return int(nnz * 24 + features * 128 * 4 * 3)


def run(args):
    """Run the walkthrough on one CPU thread (as timed in the tutorial); return 0.

    Sizes that would not fit in memory are refused before anything is generated, and an
    allocation that still fails is reported as the same one-line error, naming the flags.
    """
    # on first use: not imported to build the parser
    import torch

    from ..context import cpu  # on first use (start-up)
    from .model_memory import available_bytes, is_allocation_failure  # on first use (start-up)

    sizes = f"--rows {args.rows} --features {args.features} --density {args.density:g}"
    need, have = needed_bytes(args.rows, args.features, args.density), available_bytes(cpu())
    if have is not None and need > have:
        raise InvalidArgumentError(f"{sizes}: the walkthrough needs about "
                                   f"{need / 2 ** 30:.3g} GiB, more than the "
                                   f"{have / 2 ** 30:.3g} GiB of memory available; give "
                                   f"smaller sizes")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        walkthrough(args.out, args.rows, args.features, args.density, args.seed, args.batch_size)
    except (RuntimeError, MemoryError) as exc:
        if isinstance(exc, SparsenetError) or not is_allocation_failure(exc):
            raise
        raise InvalidArgumentError(f"{sizes}: out of memory ({' '.join(str(exc).split())[:200]}"
                                   f"); give smaller sizes") from None
    finally:
        torch.set_num_threads(threads)
    return 0
