"""One optimizer step on an ``nn.EmbeddingBag(sparse=True)`` gradient: sparsenet.torch.optim vs
torch's own sparse-capable optimizers and a hand-written lazy loop in torch.

    python benchmarks/bench_torch_optim.py [--rows 1000000] [--dim 64] [--bags 4096]
                                           [--per-bag 20] [--repeat 15] [--threads 2]

A ``rows x dim`` float32 EmbeddingBag(mode='sum', sparse=True); the gradients of 4 batches
of ``bags`` bags of ``per-bag`` random ids (uncoalesced, as autograd gives them: every step
coalesces them), taken in rotation so that rows skip steps and reappear (the exact modes then
catch them up). Each implementation's ``step()`` runs on its own copy of the weight with
``p.grad`` set (outside the timing) to the step's gradient; implementations take turns,
medians of ``repeat`` steps. Rows:

* SGD (lr only): sparsenet ``SGD`` vs ``torch.optim.SGD`` (sparse grads) vs hand-written
  ``index_add_``;
* SGD momentum + weight decay, lazy: sparsenet vs hand-written (torch's SGD refuses sparse
  gradients with momentum or weight decay);
* Adam lazy: sparsenet ``Adam`` vs ``torch.optim.SparseAdam`` vs hand-written;
* Adagrad: sparsenet ``Adagrad`` vs ``torch.optim.Adagrad`` (sparse) vs hand-written;
* exact modes (SGD with weight decay, Adam): sparsenet ``lazy_update='exact'`` vs the dense
  torch step it stands for (``torch.optim`` on the dense gradient).

Prints a Markdown table of median milliseconds and sparsenet / fastest peer.
"""
import argparse
import statistics
import time

import torch

from sparsenet.torch import optim as sn


def make_grads(rows, dim, bags, per_bag, count=4, seed=0):
    """The initial weight and ``count`` EmbeddingBag gradients of random batches."""
    gen = torch.Generator().manual_seed(seed)
    bag = torch.nn.EmbeddingBag(rows, dim, mode="sum", sparse=True)
    grads = []
    for _ in range(count):
        ids = torch.randint(0, rows, (bags, per_bag), generator=gen)
        bag.weight.grad = None
        bag(ids).sum().backward()
        grads.append(bag.weight.grad)
    return bag.weight.detach().clone(), grads


def hand_sgd(p, lr):
    g = p.grad.coalesce()
    p.data.index_add_(0, g.indices()[0], g.values(), alpha=-lr)


class HandMomentum:
    """Lazy SGD with momentum and weight decay on the gradient's rows (torch ops)."""

    def __init__(self, p, lr, mu, wd):
        self.p, self.lr, self.mu, self.wd = p, lr, mu, wd
        self.buf = torch.zeros_like(p)

    def step(self):
        g = self.p.grad.coalesce()
        idx, val = g.indices()[0], g.values()
        w = self.p.data.index_select(0, idx)
        b = self.buf.index_select(0, idx).mul_(self.mu).add_(val).add_(w, alpha=self.wd)
        self.buf.index_copy_(0, idx, b)
        self.p.data.index_copy_(0, idx, w.add_(b, alpha=-self.lr))


class HandAdam:
    """Lazy Adam on the gradient's rows (torch ops, SparseAdam's rule)."""

    def __init__(self, p, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.p, self.lr, self.b1, self.b2, self.eps, self.t = p, lr, b1, b2, eps, 0
        self.m = torch.zeros_like(p)
        self.v = torch.zeros_like(p)

    def step(self):
        self.t += 1
        g = self.p.grad.coalesce()
        idx, val = g.indices()[0], g.values()
        m = self.m.index_select(0, idx).mul_(self.b1).add_(val, alpha=1 - self.b1)
        v = self.v.index_select(0, idx).mul_(self.b2).addcmul_(val, val, value=1 - self.b2)
        self.m.index_copy_(0, idx, m)
        self.v.index_copy_(0, idx, v)
        step = self.lr * (1 - self.b2 ** self.t) ** 0.5 / (1 - self.b1 ** self.t)
        w = self.p.data.index_select(0, idx).addcdiv_(m, v.sqrt_().add_(self.eps), value=-step)
        self.p.data.index_copy_(0, idx, w)


class HandAdagrad:
    def __init__(self, p, lr, eps=1e-10):
        self.p, self.lr, self.eps = p, lr, eps
        self.s = torch.zeros_like(p)

    def step(self):
        g = self.p.grad.coalesce()
        idx, val = g.indices()[0], g.values()
        s = self.s.index_select(0, idx).addcmul_(val, val)
        self.s.index_copy_(0, idx, s)
        self.p.data.index_add_(0, idx, val / s.sqrt_().add_(self.eps), alpha=-self.lr)


def contenders(weight, grads):
    """Yield ``(case, {implementation: (parameter, step function)})``, one case at a time
    (each implementation on its own weight copy; a case's copies are freed before the next)."""
    def param(dense=False):
        p = torch.nn.Parameter(weight.clone())
        p.dense_grad = dense
        p.grad = grads[0].to_dense() if dense else grads[0]
        return p

    def sgd():
        p = [param() for _ in range(3)]
        return {"sparsenet": sn.SGD([p[0]], lr=0.1).step,
                "torch SGD": torch.optim.SGD([p[1]], lr=0.1).step,
                "hand-written lazy": lambda q=p[2]: hand_sgd(q, 0.1)}

    def momentum():
        p = [param() for _ in range(2)]
        return {"sparsenet": sn.SGD([p[0]], lr=0.1, momentum=0.9, weight_decay=1e-4).step,
                "hand-written lazy": HandMomentum(p[1], 0.1, 0.9, 1e-4).step}

    def adam():
        p = [param() for _ in range(3)]
        return {"sparsenet": sn.Adam([p[0]], lr=1e-3).step,
                "torch SparseAdam": torch.optim.SparseAdam([p[1]], lr=1e-3).step,
                "hand-written lazy": HandAdam(p[2], 1e-3).step}

    def adagrad():
        p = [param() for _ in range(3)]
        return {"sparsenet": sn.Adagrad([p[0]], lr=0.1).step,
                "torch Adagrad": torch.optim.Adagrad([p[1]], lr=0.1).step,
                "hand-written lazy": HandAdagrad(p[2], 0.1).step}

    def sgd_exact():
        p = [param(), param(dense=True)]
        return {"sparsenet": sn.SGD([p[0]], lr=0.1, weight_decay=1e-4, lazy_update="exact").step,
                "torch SGD dense grad": torch.optim.SGD([p[1]], lr=0.1, weight_decay=1e-4).step}

    def adam_exact():
        p = [param(), param(dense=True)]
        return {"sparsenet": sn.Adam([p[0]], lr=1e-3, lazy_update="exact").step,
                "torch Adam dense grad": torch.optim.Adam([p[1]], lr=1e-3).step}

    yield "SGD", sgd()
    yield "SGD momentum+wd (lazy)", momentum()
    yield "Adam (lazy)", adam()
    yield "Adagrad", adagrad()
    yield "SGD wd, exact vs dense", sgd_exact()
    yield "Adam, exact vs dense", adam_exact()


def _params_of(funcs):
    """The parameter each step function updates (the one its optimizer or object holds)."""
    out = {}
    for name, fn in funcs.items():
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, torch.optim.Optimizer):
            out[name] = owner.param_groups[0]["params"][0]
        elif owner is not None:
            out[name] = owner.p
        else:
            out[name] = fn.__defaults__[0]
    return out


def medians(funcs, grads, repeat, warmup=2):
    dense = {}
    times = {name: [] for name in funcs}
    params = _params_of(funcs)
    for i in range(warmup + repeat):
        g = grads[i % len(grads)]
        for name, fn in funcs.items():
            p = params[name]
            if p.dense_grad:
                if i % len(grads) not in dense:
                    dense[i % len(grads)] = g.to_dense()
                p.grad = dense[i % len(grads)]
            else:
                p.grad = g
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            if i >= warmup:
                times[name].append(dt * 1e3)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--bags", type=int, default=4096)
    ap.add_argument("--per-bag", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    weight, grads = make_grads(args.rows, args.dim, args.bags, args.per_bag)
    touched = grads[0].coalesce().indices().shape[1]
    print(f"EmbeddingBag {args.rows} x {args.dim}, batch {args.bags} x {args.per_bag} ids "
          f"({touched} distinct rows), torch {torch.__version__}, {args.threads} threads, "
          f"median of {args.repeat} steps (ms)\n")
    print("| case | sparsenet | peers | sparsenet / fastest peer |")
    print("|---|---|---|---|")
    for case, funcs in contenders(weight, grads):
        med = medians(funcs, grads, args.repeat)
        ours = med.pop("sparsenet")
        best = min(med, key=med.get)
        peers = ", ".join(f"{name} {ms:.2f}" for name, ms in med.items())
        print(f"| {case} | {ours:.2f} | {peers} | {ours / med[best]:.2f} |", flush=True)
        del funcs


if __name__ == "__main__":
    main()
