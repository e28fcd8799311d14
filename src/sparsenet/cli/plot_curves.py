"""``learning_curves.png``: each metric per epoch, training and validation side by side.

matplotlib is optional: it is imported only when a plot is asked for
(:func:`sparsenet.cli._plotting.pyplot`, a one-line error when it is missing).
"""
from ..atomic import atomic_write
from ._plotting import pyplot

__all__ = ["plot_history"]


def plot_history(history, path):
    """Plot ``history`` (``metrics.jsonl`` records) to ``path``; return ``path``."""
    plt = pyplot()
    names = []
    for record in history:
        for part in ("train", "val"):
            names += [k for k in record[part] if k not in names]
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(4 * max(1, len(names)), 3.2),
                             squeeze=False)
    epochs = [r["epoch"] for r in history]
    for ax, name in zip(axes[0], names):
        for part in ("train", "val"):
            values = [r[part].get(name, float("nan")) for r in history]
            if any(v == v for v in values):
                ax.plot(epochs, values, marker="o", label=part)
        ax.set_title(name)
        ax.set_xlabel("epoch")
        ax.set_xticks(epochs)
        ax.legend()
    fig.tight_layout()
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=80))
    plt.close(fig)
    return path
