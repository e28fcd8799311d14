"""Fixed cost per eager operator call and per small training step: sparsenet vs raw torch.

    OMP_NUM_THREADS=1 python benchmarks/bench_dispatch.py [--repeats 7] [--calls 2000]
        [--steps 200] [--profile]

Part 1, single eager calls, microseconds per call (median over ``--repeats`` timed loops
of ``--calls`` calls each) of the sparsenet call and of the torch call it ends in, and
their difference (the fixed cost of dispatch, wrapping and recording):

* ``dot(csr, dense)``: a 128 x 1000 CSR batch (8 nnz a row) times a 1000 x 16 weight;
* ``x + y``, ``sum(x)``: 128 x 16 dense arrays;
* ``Embedding``: 128 ids into a 1000 x 16 table;
* ``sgd_update``: a 1000 x 16 weight and dense gradient, in place.

Part 2, one training step, milliseconds (median over ``--repeats`` runs of ``--steps``
steps each), with the Python function calls per step (cProfile) under ``--profile``:

* ``mf``: MXNet's ``example/sparse/matrix_factorization`` shape at batch 128: two
  ``Embedding(sparse_grad=True)`` blocks (10,000 x 64), elementwise multiply, sum, L2
  loss, backward, ``Trainer.step`` with SGD;
* ``logreg``: a Gluon ``Dense(1)`` on a CSR batch of 256 rows (100,000 features, 20 nnz a
  row), sigmoid binary cross-entropy, backward, ``Trainer.step`` with SGD.

Part 3, ``Trainer.step`` alone, milliseconds (median / min as above): 10 small dense
parameters (16 x 16 weights and 16-element biases, dense gradients) and 2 row_sparse
embeddings (10,000 x 16, 128 gradient rows each), with SGD, SGD with momentum (wd 1e-4)
and Adam; the same gradients each step, marked fresh (no forward or backward pass).
"""
import argparse
import cProfile
import pstats
import statistics
import time

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F

import sparsenet as mx
from sparsenet import autograd, gluon, grad_store


def per_call_us(fn, calls, repeats):
    """``(median, min)`` microseconds per call of ``fn()`` over ``repeats`` loops of ``calls``
    calls (the minimum is the steadier figure on a shared machine)."""
    for _ in range(min(calls, 50)):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times) * 1e6, min(times) * 1e6


def op_cases(rng):
    """``(name, sparsenet call, torch call)`` for each single-operator case."""
    csr = sp.random(128, 1000, density=0.008, format="csr", dtype=np.float32, random_state=0)
    x_csr = mx.nd.sparse.csr_matrix(csr)
    t_csr = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)),
                                    torch.from_numpy(csr.indices.astype(np.int64)),
                                    torch.from_numpy(csr.data), size=csr.shape)
    w = rng.standard_normal((1000, 16)).astype(np.float32)
    x = rng.standard_normal((128, 16)).astype(np.float32)
    y = rng.standard_normal((128, 16)).astype(np.float32)
    ids = rng.integers(0, 1000, 128).astype(np.float32)
    W, X, Y, IDS = mx.nd.array(w), mx.nd.array(x), mx.nd.array(y), mx.nd.array(ids)
    tW, tX, tY = torch.from_numpy(w), torch.from_numpy(x), torch.from_numpy(y)
    tids = torch.from_numpy(ids).long()
    sw, sg = mx.nd.array(w), mx.nd.array(w * 0.01)
    tsw, tsg = torch.from_numpy(w.copy()), torch.from_numpy(w * 0.01)

    def torch_sgd():
        tsw.mul_(1 - 0.1 * 1e-4).add_(tsg, alpha=-0.1)

    return [
        ("dot(csr, dense)", lambda: mx.nd.dot(x_csr, W), lambda: torch.sparse.mm(t_csr, tW)),
        ("x + y", lambda: X + Y, lambda: tX + tY),
        ("sum(x)", lambda: mx.nd.sum(X), lambda: tX.sum()),
        ("Embedding", lambda: mx.nd.Embedding(IDS, W, input_dim=1000, output_dim=16),
         lambda: F.embedding(tids, tW)),
        ("sgd_update", lambda: mx.nd.sgd_update(sw, sg, lr=0.1, wd=1e-4, out=sw), torch_sgd),
    ]


class MFNet(gluon.Block):
    """matrix_factorization's model: user and item embeddings, dot product per row."""

    def __init__(self, users, items, factor):
        super().__init__()
        self.user = gluon.nn.Embedding(users, factor, sparse_grad=True)
        self.item = gluon.nn.Embedding(items, factor, sparse_grad=True)

    def forward(self, u, i):
        return (self.user(u) * self.item(i)).sum(axis=1)


def mf_step(rng):
    """One matrix_factorization training step at batch 128, as a closure."""
    net = MFNet(10_000, 10_000, 64)
    net.initialize(mx.init.Normal(0.01))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
    loss_fn = gluon.loss.L2Loss()
    u = mx.nd.array(rng.integers(0, 10_000, 128))
    i = mx.nd.array(rng.integers(0, 10_000, 128))
    r = mx.nd.array(rng.random(128) * 5)

    def step():
        with autograd.record():
            loss = loss_fn(net(u, i), r)
        loss.backward()
        trainer.step(128)
    return step


def logreg_step(rng):
    """One logistic-regression step: Dense(1) on a 256-row CSR batch."""
    csr = sp.random(256, 100_000, density=20 / 100_000, format="csr", dtype=np.float32,
                    random_state=1)
    x = mx.nd.sparse.csr_matrix(csr)
    y = mx.nd.array(rng.integers(0, 2, 256))
    net = gluon.nn.Dense(1, in_units=100_000)
    net.initialize(mx.init.Normal(0.01))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(256)
    return step


def trainer_step(name, kwargs):
    """One ``Trainer.step`` over 10 small dense parameters and 2 row_sparse embeddings."""
    rng = np.random.default_rng(2)
    params = gluon.ParameterDict()
    for k in range(5):
        params.get(f"fc{k}_weight", shape=(16, 16))
        params.get(f"fc{k}_bias", shape=(16,))
    for k in range(2):
        params.get(f"emb{k}_weight", shape=(10_000, 16), stype="default",
                   grad_stype="row_sparse")
    params.initialize(mx.init.Normal(0.01))
    trainer = gluon.Trainer(params, name, kwargs)
    grads = {}
    for p in params.values():
        if p.grad_stype == "row_sparse":
            rows = np.sort(rng.choice(p.shape[0], 128, replace=False))
            grads[p.name] = mx.nd.sparse.row_sparse_array(
                (rng.standard_normal((128,) + p.shape[1:]).astype(np.float32), rows),
                shape=p.shape)
        else:
            grads[p.name] = mx.nd.array(rng.standard_normal(p.shape).astype(np.float32) * 0.01)
    bufs = []
    for p in params.values():
        buf = p.grad()
        if buf.stype == "row_sparse":
            buf._replace(grads[p.name])
        else:
            buf[:] = grads[p.name]
        bufs.append(buf)

    def step():
        for buf in bufs:  # fresh, as a backward pass leaves it (the same values each step)
            grad_store.mark_fresh(buf)
        trainer.step(128)
    return step


def calls_per_run(fn, n=20):
    """Python function calls per ``fn()`` (cProfile, averaged over ``n`` runs)."""
    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    return pstats.Stats(prof).total_calls / n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--profile", action="store_true",
                        help="also count Python function calls per op call and per step")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    mx.config.set_storage_fallback("error")
    torch.set_grad_enabled(False)  # the torch baseline: plain eager calls, nothing recorded
    print(f"torch threads: {torch.get_num_threads()}; each figure: median / min over "
          f"{args.repeats} repeats")
    print("| op | sparsenet us/call | torch us/call | overhead us |"
          + (" py calls/call |" if args.profile else ""))
    print("|---|---|---|---|" + ("---|" if args.profile else ""))
    for name, ours, theirs in op_cases(rng):
        torch.set_grad_enabled(True)  # sparsenet as users run it (no_grad set per call)
        a = per_call_us(ours, args.calls, args.repeats)
        torch.set_grad_enabled(False)
        b = per_call_us(theirs, args.calls, args.repeats)
        extra = f" {calls_per_run(ours, 200):.0f} |" if args.profile else ""
        print(f"| {name} | {a[0]:.1f} / {a[1]:.1f} | {b[0]:.1f} / {b[1]:.1f} | "
              f"{a[0] - b[0]:.1f} / {a[1] - b[1]:.1f} |{extra}")
    torch.set_grad_enabled(True)
    print()
    print("| step | ms/step |" + (" py calls/step |" if args.profile else ""))
    print("|---|---|" + ("---|" if args.profile else ""))
    for name, make in (("mf (batch 128)", mf_step), ("logreg Dense-on-CSR (batch 256)",
                                                       logreg_step)):
        step = make(rng)
        med, best = per_call_us(step, args.steps, args.repeats)
        extra = f" {calls_per_run(step):.0f} |" if args.profile else ""
        print(f"| {name} | {med / 1e3:.3f} / {best / 1e3:.3f} |{extra}")
    print()
    print("| Trainer.step, 10 dense + 2 row_sparse params | ms/step |"
          + (" py calls/step |" if args.profile else ""))
    print("|---|---|" + ("---|" if args.profile else ""))
    for name, kwargs in (("sgd", {"learning_rate": 0.1}),
                         ("sgd momentum, wd", {"learning_rate": 0.1, "momentum": 0.9,
                                               "wd": 1e-4}),
                         ("adam", {"learning_rate": 0.01})):
        step = trainer_step(name.split()[0], kwargs)
        med, best = per_call_us(step, args.steps, args.repeats)
        extra = f" {calls_per_run(step):.0f} |" if args.profile else ""
        print(f"| {name} | {med / 1e3:.3f} / {best / 1e3:.3f} |{extra}")


if __name__ == "__main__":
    main()
