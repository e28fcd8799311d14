"""The main job (`make demo`): seed 000's sparse-storage walkthrough on sparsenet.

Generates the tutorial's 1000 x 1,000,000 CSR dataset, prints dense vs CSR
memory, and shows storage-type inference on a few operators.
"""
import numpy as np

import sparsenet as mx


def get_nbytes(array):
    """Bytes held by an array's parts (the tutorial's helper, built in as ``.nbytes``)."""
    return array.nbytes


def main():
    np.random.seed(42)
    num_samples, num_features = 1000, 1000000
    data = mx.test_utils.rand_ndarray((num_samples, num_features), stype="csr", density=0.00001)
    label = data.sum(axis=1) > data.sum(axis=1).mean()
    print(type(data).__name__, data.shape)
    print("{:,.0f} elements".format(np.prod(data.shape)))
    print("{:,.0f} non-zero elements".format(data.data.size))
    dense_bytes = num_samples * num_features * np.dtype(np.float32).itemsize
    print("NDArray (dense):", dense_bytes / 1e6, "MBs (computed from the shape; not allocated)")
    print("CSRNDArray:", get_nbytes(data) / 1e6, "MBs")
    print("positive labels:", int(label.sum().asscalar()), "of", num_samples)

    print("\nStorage-type inference:")
    x = mx.nd.sparse.csr_matrix(([7.0, 8.0, 9.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
    w = mx.nd.ones((3, 2))
    g = mx.nd.dot(x, w, transpose_a=True)
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
