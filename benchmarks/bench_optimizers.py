"""One optimizer step with a row_sparse gradient: sparsenet vs PyTorch (vs MXNet 1.9.1 when given).

    python benchmarks/bench_optimizers.py [--threads 2] [--repeat 30] [--rows 1000 10000]
                                          [--streak 1] [--mxnet-python /tmp/mx/bin/python]

A 1,000,000 x 128 float32 dense weight and coalesced row_sparse gradients of
``rows`` random rows (64 rotating gradients, each call takes the next one, so the
rows it touches are cold in the cache). For each optimizer: sparsenet's lazy step (through the
optimizer class, ``opt.update``), the peers on the same data (torch's ``SGD``,
``SparseAdam``, ``Adagrad`` with sparse gradients, a hand-written torch lazy Adam
with ``index_select``/``index_copy_``, MXNet's lazy kernels in a subprocess), and
the memory-traffic bound: ``rows x 128 x 4 bytes x arrays touched / copy
bandwidth``, with the copy bandwidth measured in the same run. A dense Adam step
on the whole weight is printed for contrast (sparsenet's dense rule row runs torch's fused
Adam kernel: the ratio should stay near 1), and the *row-access floor*: the same
gathers and scatters as each lazy kernel with no arithmetic (random 512-byte rows are
latency-bound, so this floor sits well above the bandwidth bound). Prints Markdown
tables of median milliseconds and the ratios sparsenet / fastest peer, / bound and
/ floor.

Implementations take turns; ``--streak N`` makes each turn N calls in a row. With 1
every call finds its own code, and not only its rows, cold: all the other
implementations ran since its last call. With 4 the rows stay cold (each call has the
next gradient of the rotation) but the code is warm after the first call of a turn, as
in a training loop that runs the step every batch.
"""
import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import torch

import sparsenet as mx

ROWS_TOTAL, DIM, ROTATE = 1_000_000, 128, 64
# arrays read or written per touched row: weight, gradient, states (each read and written)
TRAFFIC = {"SGD": 3, "SGD-momentum": 5, "Adam": 7, "AdaGrad": 5}


def interleaved_medians(steps, repeat, warmup=2, external=None, block=5, streak=1):
    """Median milliseconds of each step function, calling them round-robin so that load
    changes on a shared machine hit every implementation alike. Every call gets the next
    gradient of the rotation, so the rows it touches are cold in the cache. Each turn of an
    implementation is ``streak`` calls in a row (1: its code is cold too, every other
    implementation having run since its last call; more: its code is warm after the first,
    as in a training loop that steps every batch). ``external`` (a process measuring other
    implementations) runs ``block`` rounds after each block."""
    times = {name: [] for name in steps}
    call = 0
    for i in range(warmup + repeat):
        for name, step in steps.items():
            for _ in range(streak):
                t0 = time.perf_counter()
                step(call % ROTATE)
                elapsed = time.perf_counter() - t0
                call += 1
                if i >= warmup:
                    times[name].append(elapsed)
        if external is not None and (i + 1) % block == 0:
            for name, ts in external.run(block, keep=i >= warmup).items():
                times.setdefault(name, []).extend(ts)
    return {name: statistics.median(t) * 1e3 for name, t in times.items() if t}


def copy_bandwidth_gbs(repeat=7):
    src = torch.randn(64 * 1024 * 1024)  # 256 MiB
    dst = torch.empty_like(src)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        dst.copy_(src)
        times.append(time.perf_counter() - t0)
    return 2 * src.numel() * 4 / statistics.median(times) / 1e9


def make_grads(rows, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(ROTATE):
        idx = np.sort(rng.choice(ROWS_TOTAL, rows, replace=False))
        out.append((torch.from_numpy(idx), torch.randn(rows, DIM)))
    return out


def sparsenet_steps(w, grads):
    """Lazy steps through the optimizer classes (and the exact mode, for information) on
    sparsenet's weight ``w``."""
    nd_grads = [mx.nd.sparse.row_sparse_array((v, i), shape=(ROWS_TOTAL, DIM)) for i, v in grads]
    steps = {}
    for label, name, kwargs in [
            ("SGD", "sgd", dict(learning_rate=0.1)),
            ("SGD-momentum", "sgd", dict(learning_rate=0.1, momentum=0.9)),
            ("Adam", "adam", dict(learning_rate=0.001)),
            ("AdaGrad", "adagrad", dict(learning_rate=0.1))]:
        for lazy in (True, "exact"):
            if lazy == "exact" and label in ("SGD", "AdaGrad"):
                continue  # without weight decay a skipped step is the identity: same as lazy
            opt = mx.optimizer.create(name, lazy_update=lazy, **kwargs)
            state = opt.create_state(0, w)
            tag = "lazy" if lazy is True else "lazy_update='exact'"
            steps[(label, f"sparsenet {label} ({tag})")] = (
                lambda k, opt=opt, w=w, state=state: opt.update(0, w, nd_grads[k], state))
    return steps


def torch_sparse_grad(i, v):
    return torch.sparse_coo_tensor(i.reshape(1, -1), v, (ROWS_TOTAL, DIM), is_coalesced=True)


def torch_steps(weight, grads):
    tg = [torch_sparse_grad(i, v) for i, v in grads]
    steps = {}

    def add(label, name, make):
        p = torch.nn.Parameter(weight, requires_grad=True)
        opt = make(p)

        def step(k):
            p.grad = tg[k]
            opt.step()
        steps[(label, name)] = step

    add("SGD", "torch SGD (sparse grad)", lambda p: torch.optim.SGD([p], lr=0.1))
    add("SGD-momentum", "torch SGD momentum=0.9 (standard rule, growing sparse buffer)",
        lambda p: torch.optim.SGD([p], lr=0.1, momentum=0.9))
    add("Adam", "torch SparseAdam", lambda p: torch.optim.SparseAdam([p], lr=0.001))
    add("AdaGrad", "torch Adagrad (sparse grad)", lambda p: torch.optim.Adagrad([p], lr=0.1))

    m, v = torch.zeros_like(weight), torch.zeros_like(weight)
    state = {"t": 0}

    @torch.no_grad()
    def lazy_adam(k, b1=0.9, b2=0.999, eps=1e-8, lr=0.001):
        idx, g = grads[k]
        state["t"] += 1
        t = state["t"]
        mr = m.index_select(0, idx).mul_(b1).add_(g, alpha=1 - b1)
        vr = v.index_select(0, idx).mul_(b2).addcmul_(g, g, value=1 - b2)
        step = lr * (1 - b2 ** t) ** 0.5 / (1 - b1 ** t)
        wr = weight.index_select(0, idx).addcdiv_(mr, vr.sqrt().add_(eps), value=-step)
        m.index_copy_(0, idx, mr)
        v.index_copy_(0, idx, vr)
        weight.index_copy_(0, idx, wr)

    steps[("Adam", "torch hand-written lazy Adam (index_select/index_copy_)")] = lazy_adam
    return steps


def floor_steps(weight, grads):
    """The row accesses of each lazy kernel with no arithmetic: its gathers and scatters."""
    states = [torch.zeros_like(weight) for _ in range(2)]

    def sgd(k):
        idx, g = grads[k]
        weight.index_add_(0, idx, g)

    def one_state(k):
        idx, g = grads[k]
        r = states[0].index_select(0, idx)
        states[0].index_copy_(0, idx, r)
        weight.index_add_(0, idx, r)

    def two_states(k):
        idx, g = grads[k]
        r, q = states[0].index_select(0, idx), states[1].index_select(0, idx)
        states[0].index_copy_(0, idx, r)
        states[1].index_copy_(0, idx, q)
        weight.index_add_(0, idx, r)

    name = "row-access floor: the kernel's gathers/scatters only ({})"
    return {("SGD", name.format("w.index_add_")): sgd,
            ("SGD-momentum", name.format("1 state")): one_state,
            ("Adam", name.format("2 states")): two_states,
            ("AdaGrad", name.format("1 state")): one_state}


def dense_adam_contrast(weight, repeat):
    grad = torch.randn_like(weight)
    p = torch.nn.Parameter(weight)
    opt = torch.optim.Adam([p], lr=0.001, fused=True)
    w, g = mx.nd.from_torch(weight), mx.nd.from_torch(grad)
    adam = mx.optimizer.Adam(learning_rate=0.001)
    state = adam.create_state(0, w)

    def torch_step(_):
        p.grad = grad
        opt.step()
    return interleaved_medians({"torch Adam(fused=True), dense gradient": torch_step,
                                "sparsenet Adam, dense gradient":
                                    lambda _: adam.update(0, w, g, state)},
                               max(3, repeat // 5), warmup=1)


MXNET_SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np, mxnet as mx
    rows, total, dim, rotate, streak = map(int, sys.argv[1:6])
    rng = np.random.default_rng(rows)
    grads = []
    for _ in range(rotate):
        idx = np.sort(rng.choice(total, rows, replace=False))
        grads.append(mx.nd.sparse.row_sparse_array(
            (mx.nd.random.normal(shape=(rows, dim)), idx), shape=(total, dim)))
    w = mx.nd.random.normal(shape=(total, dim))
    mom, mean, var, hist = (mx.nd.zeros((total, dim)) for _ in range(4))
    steps = {
        "SGD-momentum": lambda k: mx.nd.sgd_mom_update(
            w, grads[k], mom, lr=0.1, momentum=0.9, lazy_update=True, out=w),
        "Adam": lambda k: mx.nd.adam_update(
            w, grads[k], mean, var, lr=0.001, lazy_update=True, out=w),
        "AdaGrad": lambda k: mx.nd.sparse.adagrad_update(
            w, grads[k], hist, lr=0.1, epsilon=1e-7, out=w),
    }
    call = 0
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        out = {name: [] for name in steps}
        for _ in range(n):
            for name, step in steps.items():
                for _ in range(streak):
                    t0 = time.perf_counter(); step(call % rotate); w.wait_to_read()
                    out[name].append(time.perf_counter() - t0); call += 1
        print(json.dumps(out), flush=True)
""")


class MXNetSteps:
    """MXNet 1.9.1's lazy kernels in a subprocess (another venv), measured in blocks between
    sparsenet's rounds."""

    NAMES = {"SGD-momentum": "MXNet 1.9.1 sgd_mom_update (lazy)",
             "Adam": "MXNet 1.9.1 adam_update (lazy)",
             "AdaGrad": "MXNet 1.9.1 sparse.adagrad_update"}

    def __init__(self, python, rows, threads, streak=1):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                   MXNET_CPU_WORKER_NTHREADS=str(threads))
        self.proc = subprocess.Popen([python, "-c", MXNET_SCRIPT, str(rows), str(ROWS_TOTAL),
                                      str(DIM), str(ROTATE), str(streak)], env=env,
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        while self.proc.stdout.readline().strip() != "ready":
            if self.proc.poll() is not None:
                raise RuntimeError("the MXNet subprocess exited before starting")

    def run(self, n, keep=True):
        self.proc.stdin.write(f"{n}\n")
        self.proc.stdin.flush()
        got = json.loads(self.proc.stdout.readline())
        return {(k, self.NAMES[k]): v for k, v in got.items()} if keep else {}

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def report(rows, results, bandwidth):
    lines = [f"**{rows:,} rows of 1,000,000 x 128 float32**", "",
             "| optimizer | implementation | median ms |", "|---|---|---|"]
    for label in TRAFFIC:
        for (lab, name), ms in results.items():
            if lab == label:
                lines.append(f"| {label} | {name} | {ms:.3f} |")
        bound = rows * DIM * 4 * TRAFFIC[label] / (bandwidth * 1e9) * 1e3
        lines.append(f"| {label} | memory-traffic bound ({TRAFFIC[label]} arrays) | {bound:.3f} |")
    lines += ["", "| optimizer | sparsenet lazy / fastest peer | sparsenet lazy / bound | "
              "sparsenet lazy / row-access floor |", "|---|---|---|---|"]
    for label in TRAFFIC:
        ours = results[(label, f"sparsenet {label} (lazy)")]
        peers = [ms for (lab, name), ms in results.items()
                 if lab == label and not name.startswith(("sparsenet", "row-access"))]
        floor = [ms for (lab, name), ms in results.items()
                 if lab == label and name.startswith("row-access")][0]
        bound = rows * DIM * 4 * TRAFFIC[label] / (bandwidth * 1e9) * 1e3
        lines.append(f"| {label} | {ours / min(peers):.2f} | {ours / bound:.2f} | "
                     f"{ours / floor:.2f} |")
    return "\n".join(lines)


def main(argv=None):
    global ROTATE
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=40)
    p.add_argument("--rows", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--mxnet-python", default=None,
                   help="python of a venv with mxnet==1.9.1 (measured in a subprocess)")
    p.add_argument("--no-dense", action="store_true", help="skip the dense Adam contrast")
    p.add_argument("--streak", type=int, default=1,
                   help="calls of one implementation in a row, each on the next gradient (1: "
                        "its code is cold too; 4: warm after the first call, as in training)")
    p.add_argument("--rotate", type=int, default=ROTATE,
                   help="gradients in the rotation (1: the same rows every call, warm in the "
                        "cache; the default makes every call's rows cold)")
    args = p.parse_args(argv)
    ROTATE = args.rotate
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", message="Sparse invariant checks")
    bandwidth = copy_bandwidth_gbs()
    print(f"torch {torch.__version__}, {args.threads} thread(s), weight {ROWS_TOTAL:,} x {DIM} "
          f"float32, {ROTATE} rotating gradients, {args.streak} call(s) in a row, median of "
          f"{args.repeat * args.streak}; measured copy "
          f"bandwidth {bandwidth:.1f} GB/s\n")
    weight = torch.randn(ROWS_TOTAL, DIM)
    # sparsenet's copy, allocated as a Gluon Parameter's or mx.nd.zeros' (on huge pages
    # where the system offers them); the peers use the torch tensor
    sn_weight = mx.nd.zeros((ROWS_TOTAL, DIM))
    sn_weight[:] = mx.nd.from_torch(weight)
    for rows in args.rows:
        grads = make_grads(rows, seed=rows)
        steps = {**sparsenet_steps(sn_weight, grads), **torch_steps(weight, grads),
                 **floor_steps(weight, grads)}
        external = MXNetSteps(args.mxnet_python, rows, args.threads, args.streak) \
            if args.mxnet_python else None
        try:
            results = interleaved_medians(steps, args.repeat, external=external,
                                          streak=args.streak)
        finally:
            if external is not None:
                external.close()
        del steps
        print(report(rows, results, bandwidth))
        print()
        gc.collect()
    if not args.no_dense:
        print("**Dense Adam step on the whole weight (contrast)**\n")
        print("| implementation | median ms |\n|---|---|")
        dense = dense_adam_contrast(weight, args.repeat)
        for name, ms in dense.items():
            print(f"| {name} | {ms:.1f} |")
        ours, torch_ms = dense["sparsenet Adam, dense gradient"], dense[
            "torch Adam(fused=True), dense gradient"]
        print(f"\nsparsenet / torch fused: {ours / torch_ms:.2f} (target <= 1.1)")


if __name__ == "__main__":
    sys.exit(main())
