"""The main job (`make demo`): seed 000's "Sparse NDArrays with Gluon" walkthrough on sparsenet.

1. Generate the tutorial's 1,000 x 1,000,000 CSR dataset and compare its memory
   with the dense equivalent.
2. Write it as LibSVM (the tutorial's ``save_as_libsvm``) and read it back in
   batches with ``mx.io.LibSVMIter``.
3. Train the tutorial's three networks for one epoch each (``nn.Dense`` on CSR,
   ``FullyConnectedSparse`` with a dense and with a row_sparse weight gradient),
   printing the epoch time and the memory of weights and gradients.
4. Train the same model in plain PyTorch (``EmbeddingBag(sparse=True)``) for
   comparison, and show storage-type inference on a few operators.
"""
import os
import time

import numpy as np
import torch

import sparsenet as mx
from seed000_model import (VARIANTS, TorchModel, build_net, save_as_libsvm, torch_batches,
                           torch_epoch)

OUT = "demo_output"


def get_nbytes(array):
    """Bytes held by an array's parts (the tutorial's helper, built in as ``.nbytes``)."""
    return array.nbytes


def train_epoch(net, data_iter, ctx):
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd')
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    data_iter.reset()
    start = time.perf_counter()
    for batch in data_iter:
        data = batch.data[0].as_in_context(ctx)
        label = batch.label[0].as_in_context(ctx)
        with mx.autograd.record():
            pred = net(data)
            loss = loss_fn(pred, label)
        loss.backward()
        trainer.step(data.shape[0])
        loss.wait_to_read()
    return time.perf_counter() - start


def torch_epoch_time(data_iter, num_features):
    """One epoch of the same model in plain PyTorch, fed the same CSR batches (zero-copy)."""
    torch.manual_seed(0)
    model = TorchModel(num_features)
    optim = torch.optim.SGD(model.parameters(), lr=0.01)
    data_iter.reset()
    batches = torch_batches([(b.data[0], b.label[0]) for b in data_iter])
    start = time.perf_counter()
    torch_epoch(model, optim, batches, torch.nn.BCEWithLogitsLoss())
    return time.perf_counter() - start


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    np.random.seed(42)
    num_samples, num_features = 1000, 1000000

    print("== Generating sparse data")
    data = mx.test_utils.rand_ndarray((num_samples, num_features), stype='csr', density=0.00001)
    label = data.sum(axis=1) > data.sum(axis=1).mean()
    print(type(data).__name__, data.shape)
    print("{:,.0f} elements".format(np.prod(data.shape)))
    print("{:,.0f} non-zero elements".format(data.data.size))
    dense_bytes = num_samples * num_features * np.dtype(np.float32).itemsize
    print("NDArray (dense):", dense_bytes / 1e6, "MBs (computed from the shape; not allocated)")
    print("CSRNDArray:", get_nbytes(data) / 1e6, "MBs")

    print("\n== Writing and reading LibSVM")
    filepath = os.path.join(OUT, "dataset.libsvm")
    save_as_libsvm(filepath, data, label)
    with open(filepath) as f:
        for _ in range(3):
            line = f.readline()
            print(line[:80] + '...' if len(line) > 80 else line.rstrip())
    print(f"{filepath}: {os.path.getsize(filepath) / 1e3:.0f} KB")
    data_iter = mx.io.LibSVMIter(data_libsvm=filepath, data_shape=(num_features,),
                                 label_shape=(1,), batch_size=10)
    batch = next(iter(data_iter))
    print("data.stype:", batch.data[0].stype, " label.stype:", batch.label[0].stype)
    print("sparse batch:", get_nbytes(batch.data[0]) / 1e6, "MBs;  dense batch:",
          batch.data[0].shape[0] * num_features * 4 / 1e6, "MBs")

    ctx = mx.gpu() if mx.test_utils.list_gpus() else mx.cpu()
    print(f"\n== Training one epoch of each network on {ctx}")
    for variant, name in VARIANTS.items():
        net = build_net(variant, num_features, ctx)
        seconds = train_epoch(net, data_iter, ctx)
        print(f"\n-- {name}: {seconds * 1e3:.1f} ms per epoch")
        mx.gluon.utils.print_memory_allocation(net, block_idxs=[0, 2, 4])
        del net
    seconds = torch_epoch_time(data_iter, num_features)
    print(f"\n-- PyTorch EmbeddingBag(sparse=True) + SGD: {seconds * 1e3:.1f} ms per epoch")

    print("\n== Storage-type inference")
    x = mx.nd.sparse.csr_matrix(([7.0, 8.0, 9.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
    g = mx.nd.dot(x, mx.nd.ones((3, 2)), transpose_a=True)
    cases = [("dot(csr, dense)", mx.nd.dot(x, mx.nd.ones((5, 2)))),
             ("dot(csr.T, dense)", g),
             ("row_sparse * 2", g * 2),
             ("row_sparse + dense", g + mx.nd.ones((5, 2))),
             ("csr + csr", x + x),
             ("sqrt(csr)", mx.nd.sqrt(x)),
             ("sum(csr, axis=1)", mx.nd.sum(x, axis=1))]
    for name, out in cases:
        print(f"  {name:<22} -> {out.stype}")
    with mx.config.storage_fallback("warn"):
        mx.config.reset_fallback_counts()
        mx.nd.log(g)
        print("\nFallbacks seen:\n" + mx.config.fallback_report())


if __name__ == "__main__":
    main()
