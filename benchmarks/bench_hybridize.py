"""One training step, eager vs hybridized vs hand-written PyTorch.

    python benchmarks/bench_hybridize.py [--batch 100] [--steps 200] [--repeats 7]
                                         [--threads 1] [--json out.json]

Two step shapes, each timed as forward + backward + optimizer update:

- ``mf``: MXNet's ``matrix_factorization`` network (user and item ``Embedding`` with
  row_sparse gradients, ReLU, ``FullyConnected`` each, inner product,
  ``LinearRegressionOutput``), 71,569 users, 65,135 items, 16 factors, plain SGD; the
  PyTorch step is ``nn.Embedding(sparse=True)`` + ``nn.Linear`` + ``torch.optim.SGD``
  with the same loss gradient;
- ``seed000``: seed 000's network 3 (``FullyConnectedSparse`` with a row_sparse
  gradient, two dense layers, sigmoids, ``SigmoidBinaryCrossEntropyLoss``) on
  100,000 features, 20 values a row; PyTorch: ``EmbeddingBag(sparse=True)``, two
  ``Linear`` layers, ``BCEWithLogitsLoss``, ``torch.optim.SGD``.

Each configuration runs ``--steps`` steps per repeat, the three alternating so that
machine noise hits them alike; the medians over repeats are reported in
microseconds a step, with the ratios to PyTorch. Time is the calling thread's CPU
time (``time.thread_time``): with one torch thread (``--threads 1``, the default) every
kernel runs on it, and time spent descheduled on a shared machine is not counted
(``--wall`` counts wall time instead).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

import sparsenet as mx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from seed000_model import FullyConnectedSparse, TorchModel, build_net  # noqa: E402

MF_USERS, MF_ITEMS, MF_FACTORS = 71569, 65135, 16
SEED_FEATURES, SEED_NNZ = 100_000, 20


# ---------------------------------------------------------------------- matrix factorization
class MatrixFactorization(mx.gluon.HybridBlock):
    """``example/sparse/matrix_factorization``'s network as a HybridBlock."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.user_weight = self.params.get("user_weight", shape=(MF_USERS, MF_FACTORS),
                                               grad_stype="row_sparse")
            self.item_weight = self.params.get("item_weight", shape=(MF_ITEMS, MF_FACTORS),
                                               grad_stype="row_sparse")
            self.user_fc = mx.gluon.nn.Dense(MF_FACTORS, in_units=MF_FACTORS)
            self.item_fc = mx.gluon.nn.Dense(MF_FACTORS, in_units=MF_FACTORS)

    def hybrid_forward(self, F, user, item, score, user_weight, item_weight):
        u = F.Embedding(user, user_weight, input_dim=MF_USERS, output_dim=MF_FACTORS,
                        sparse_grad=True)
        i = F.Embedding(item, item_weight, input_dim=MF_ITEMS, output_dim=MF_FACTORS,
                        sparse_grad=True)
        u = self.user_fc(F.relu(u))
        i = self.item_fc(F.relu(i))
        pred = F.Flatten(F.sum(u * i, axis=1))
        return F.LinearRegressionOutput(pred, score)


class TorchMF(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.user = torch.nn.Embedding(MF_USERS, MF_FACTORS, sparse=True)
        self.item = torch.nn.Embedding(MF_ITEMS, MF_FACTORS, sparse=True)
        self.user_fc = torch.nn.Linear(MF_FACTORS, MF_FACTORS)
        self.item_fc = torch.nn.Linear(MF_FACTORS, MF_FACTORS)

    def forward(self, user, item):
        u = self.user_fc(torch.relu(self.user(user)))
        i = self.item_fc(torch.relu(self.item(item)))
        return (u * i).sum(dim=1, keepdim=True)


def mf_case(batch, rng):
    user = rng.randint(0, MF_USERS, size=batch)
    item = rng.randint(0, MF_ITEMS, size=batch)
    score = rng.uniform(1, 5, size=batch).astype(np.float32)

    def sparsenet_step(hybridize):
        net = MatrixFactorization()
        net.initialize(mx.init.Normal(0.1))
        if hybridize:
            net.hybridize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
        u, i, s = mx.nd.array(user), mx.nd.array(item), mx.nd.array(score)

        def step():
            with mx.autograd.record():
                out = net(u, i, s)
            out.backward()
            trainer.step(batch)
        return step

    def torch_step():
        model = TorchMF()
        optim = torch.optim.SGD(model.parameters(), lr=0.01)
        u, i = torch.from_numpy(user), torch.from_numpy(item)
        s = torch.from_numpy(score).reshape(-1, 1)

        def step():
            optim.zero_grad()
            pred = model(u, i)
            loss = 0.5 * ((pred - s) ** 2).sum() / batch  # LinearRegressionOutput's gradient
            loss.backward()
            optim.step()
        return step
    return sparsenet_step, torch_step


# ---------------------------------------------------------------------- seed 000
class BroadcastFullyConnectedSparse(FullyConnectedSparse):
    """The tutorial's block with ``broadcast_add`` for the bias: on Symbols ``+`` is
    ``elemwise_add``, which MXNet 1.9.1 (and sparsenet) reject for these shapes."""

    def hybrid_forward(self, F, x, weight, bias):
        return F.broadcast_add(F.sparse.dot(x, weight), bias)


def seed000_case(batch, rng):
    rows = [np.unique(rng.randint(0, SEED_FEATURES, size=SEED_NNZ)) for _ in range(batch)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    indices = np.concatenate(rows).astype(np.int64)
    values = rng.uniform(0, 1, size=len(indices)).astype(np.float32)
    label = (rng.uniform(size=batch) > 0.5).astype(np.float32)

    def sparsenet_step(hybridize):
        net = build_net(3, SEED_FEATURES)
        if hybridize:  # one graph; the tutorial's block needs broadcast_add to hybridize
            seq = mx.gluon.nn.HybridSequential()
            for child in net._children.values():
                if type(child) is FullyConnectedSparse:
                    child.__class__ = BroadcastFullyConnectedSparse
                seq.add(child)
            net = seq
            net.hybridize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
        loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
        x = mx.nd.sparse.csr_matrix((values, indices, indptr), shape=(batch, SEED_FEATURES))
        y = mx.nd.array(label)

        def step():
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch)
        return step

    def torch_step():
        model = TorchModel(SEED_FEATURES)
        optim = torch.optim.SGD(model.parameters(), lr=0.01)
        loss_fn = torch.nn.BCEWithLogitsLoss()
        ti, to = torch.from_numpy(indices), torch.from_numpy(indptr[:-1].astype(np.int64))
        tv, ty = torch.from_numpy(values), torch.from_numpy(label).reshape(-1, 1)

        def step():
            optim.zero_grad()
            loss = loss_fn(model(ti, to, tv), ty)
            loss.backward()
            optim.step()
        return step
    return sparsenet_step, torch_step


CASES = {"mf": mf_case, "seed000": seed000_case}


def _time(step, n, clock=time.thread_time):
    t0 = clock()
    for _ in range(n):
        step()
    return (clock() - t0) / n * 1e6


def run_case(name, batch, steps, repeats, clock=time.thread_time):
    make_sparsenet, make_torch = CASES[name](batch, np.random.RandomState(0))
    runs = {"eager": make_sparsenet(False), "hybridized": make_sparsenet(True),
            "torch": make_torch()}
    for step in runs.values():  # warm up (graph tracing, first allocations)
        _time(step, max(5, steps // 10), clock)
    times = {k: [] for k in runs}
    for _ in range(repeats):
        for k, step in runs.items():
            times[k].append(_time(step, steps, clock))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"case": name, "batch": batch, "us_per_step": med,
            "eager/torch": med["eager"] / med["torch"],
            "hybridized/torch": med["hybridized"] / med["torch"],
            "hybridized/eager": med["hybridized"] / med["eager"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cases", default="mf,seed000")
    parser.add_argument("--wall", action="store_true", help="wall time, not thread CPU time")
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = []
    print(f"{'case':<9}{'batch':>6}{'eager us':>11}{'hybrid us':>11}{'torch us':>10}"
          f"{'eager/t':>9}{'hybrid/t':>9}{'hybrid/e':>9}")
    for name in args.cases.split(","):
        r = run_case(name, args.batch, args.steps, args.repeats,
                     time.perf_counter if args.wall else time.thread_time)
        m = r["us_per_step"]
        print(f"{name:<9}{args.batch:>6}{m['eager']:>11.1f}{m['hybridized']:>11.1f}"
              f"{m['torch']:>10.1f}{r['eager/torch']:>9.2f}{r['hybridized/torch']:>9.2f}"
              f"{r['hybridized/eager']:>9.2f}", flush=True)
        results.append(r)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
