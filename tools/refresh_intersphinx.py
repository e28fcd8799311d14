"""Refresh the intersphinx inventories in docs/_intersphinx/ (Python, NumPy, SciPy, PyTorch).

The documentation build reads these files instead of fetching each site's ``objects.inv``, so
an offline build links to those projects and prints no connection error (docs/conf.py).

Usage:
    python tools/refresh_intersphinx.py                    # download all four (network needed)
    python tools/refresh_intersphinx.py numpy torch        # download only these
    python tools/refresh_intersphinx.py --from python=/usr/share/doc/python3.11/html/objects.inv
    python tools/refresh_intersphinx.py --generate numpy torch

A download that fails leaves that project's file as it was, says why, and makes the exit status 1.
``--from NAME=PATH`` copies an inventory that is already on the machine (Debian's
``python3.11-doc`` and ``python-scipy-doc`` packages install Python's and SciPy's).
``--generate`` writes a stand-in from the installed package when neither is possible: every
public name of the package's main namespaces, with the address its site gives such a name
(``reference/generated/numpy.<name>.html`` for NumPy, ``generated/torch.<name>.html`` for
PyTorch), so the links are right for functions and classes; ``python
tools/refresh_intersphinx.py numpy torch`` replaces the stand-ins by the real inventories.
docs/_intersphinx/README.md records where each shipped file came from.
"""
import argparse
import importlib
import importlib.util
import pathlib
import shutil
import sys
import urllib.request
import zlib

FOLDER = pathlib.Path(__file__).resolve().parents[1] / "docs" / "_intersphinx"

#: Each project's documentation site (its inventory is ``<site>objects.inv``); docs/conf.py
#: links to the same addresses.
SITES = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "torch": "https://docs.pytorch.org/docs/stable/",
}

_HEADER = ("# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
           "# The remainder of this file is compressed using zlib.\n")


def download(name, timeout=30):
    """Download ``name``'s inventory into docs/_intersphinx/<name>.inv.

    Parameters
    ----------
    name : str
        A key of :data:`SITES`.
    timeout : float, optional
        Seconds to wait for the site.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    with urllib.request.urlopen(SITES[name] + "objects.inv", timeout=timeout) as response:
        data = response.read()
    if not data.startswith(b"# Sphinx inventory version"):
        raise ValueError(f"{SITES[name]}objects.inv is not a Sphinx inventory")
    target = FOLDER / f"{name}.inv"
    target.write_bytes(data)
    return target


def copy_local(name, path):
    """Copy the inventory at ``path`` (already on this machine) to docs/_intersphinx/<name>.inv.

    Parameters
    ----------
    name : str
        A key of :data:`SITES`.
    path : str
        An ``objects.inv`` file.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    with open(path, "rb") as f:
        if not f.read(32).startswith(b"# Sphinx inventory version"):
            raise ValueError(f"{path} is not a Sphinx inventory")
    target = FOLDER / f"{name}.inv"
    shutil.copyfile(path, target)
    return target


def _public(module):
    names = getattr(module, "__all__", None) or dir(module)
    return sorted(name for name in names if not name.startswith("_"))


def _load_kind():
    """``kind(obj)`` of the API extension (module, class, function or data): one rule for the
    reference and for the generated inventories."""
    path = FOLDER.parent / "_ext" / "sparsenet_apidoc.py"
    spec = importlib.util.spec_from_file_location("sparsenet_apidoc", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kind


_role = _load_kind()


def numpy_entries():
    """The stand-in NumPy entries: ``(name, role, uri)`` of its main public namespaces."""
    import numpy
    entries = [("numpy", "module", "reference/index.html#module-$"),
               ("numpy.random", "module", "reference/random/index.html#module-$"),
               ("numpy.linalg", "module", "reference/routines.linalg.html#module-$"),
               ("numpy.typing", "module", "reference/typing.html#module-$"),
               ("numpy.testing", "module", "reference/routines.testing.html#module-$"),
               ("numpy.typing.ArrayLike", "data", "reference/typing.html#$"),
               ("numpy.typing.DTypeLike", "data", "reference/typing.html#$"),
               ("numpy.typing.NDArray", "data", "reference/typing.html#$"),
               ("numpy.inf", "data", "reference/constants.html#$"),
               ("numpy.nan", "data", "reference/constants.html#$"),
               ("numpy.newaxis", "data", "reference/constants.html#$")]
    known = {entry[0] for entry in entries}
    for name in _public(numpy):
        full, obj = f"numpy.{name}", getattr(numpy, name)
        role = _role(obj)
        if full in known or role in ("module", "data"):
            continue
        if role == "class" and issubclass(obj, numpy.generic):
            entries.append((full, role, "reference/arrays.scalars.html#$"))
        else:
            entries.append((full, role, "reference/generated/$.html#$"))
    for name in _public(numpy.ndarray):
        entries.append((f"numpy.ndarray.{name}", "method", "reference/generated/$.html#$"))
    for name in _public(numpy.random):
        obj = getattr(numpy.random, name)
        if _role(obj) == "class":
            entries.append((f"numpy.random.{name}", "class", "reference/random/"
                            f"{'generator' if name == 'Generator' else 'bit_generators/index'}"
                            ".html#$"))
        elif _role(obj) == "function":
            entries.append((f"numpy.random.{name}", "function",
                            "reference/random/generated/$.html#$"))
    for name in _public(numpy.linalg):
        if _role(getattr(numpy.linalg, name)) in ("function", "class"):
            entries.append((f"numpy.linalg.{name}", _role(getattr(numpy.linalg, name)),
                            "reference/generated/$.html#$"))
    return entries, numpy.__version__


def torch_entries():
    """The stand-in PyTorch entries: ``(name, role, uri)`` of its main public namespaces."""
    import torch
    import torch.distributed
    import torch.nn.functional
    import torch.optim.lr_scheduler
    import torch.utils.data
    entries = [("torch", "module", "torch.html#module-$"),
               ("torch.nn", "module", "nn.html#module-$"),
               ("torch.nn.functional", "module", "nn.functional.html#module-$"),
               ("torch.optim", "module", "optim.html#module-$"),
               ("torch.optim.lr_scheduler", "module", "optim.html#module-$"),
               ("torch.utils.data", "module", "data.html#module-$"),
               ("torch.distributed", "module", "distributed.html#module-$"),
               ("torch.sparse", "module", "sparse.html#module-$"),
               ("torch.Tensor", "class", "tensors.html#$"),
               ("torch.dtype", "class", "tensor_attributes.html#$"),
               ("torch.device", "class", "tensor_attributes.html#$"),
               ("torch.layout", "class", "tensor_attributes.html#$"),
               ("torch.Generator", "class", "generated/$.html#$"),
               ("torch.optim.Optimizer", "class", "optim.html#$")]
    known = {entry[0] for entry in entries}
    namespaces = [("torch", torch, "generated/$.html#$"),
                  ("torch.nn", torch.nn, "generated/$.html#$"),
                  ("torch.nn.functional", torch.nn.functional, "generated/$.html#$"),
                  ("torch.optim", torch.optim, "generated/$.html#$"),
                  ("torch.optim.lr_scheduler", torch.optim.lr_scheduler, "generated/$.html#$"),
                  ("torch.utils.data", torch.utils.data, "data.html#$"),
                  ("torch.distributed", torch.distributed, "distributed.html#$"),
                  ("torch.sparse", torch.sparse, "generated/$.html#$")]
    for prefix, module, uri in namespaces:
        for name in _public(module):
            full = f"{prefix}.{name}"
            try:
                role = _role(getattr(module, name))
            except AttributeError:  # a name __all__ lists but this build lacks
                continue
            if full not in known and role in ("class", "function"):
                known.add(full)
                entries.append((full, role, uri))
    for name in _public(torch.Tensor):
        entries.append((f"torch.Tensor.{name}", "method", "generated/$.html#$"))
    return entries, torch.__version__.split("+")[0]


def generate(name):
    """Write the stand-in inventory of ``name`` from the installed package.

    Parameters
    ----------
    name : str
        ``"numpy"`` or ``"torch"``.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    builders = {"numpy": ("NumPy", numpy_entries), "torch": ("PyTorch", torch_entries)}
    project, build = builders[name]
    entries, version = build()
    body = "".join(f"{full} py:{role} 1 {uri.replace('$', full)} -\n"
                   for full, role, uri in entries)
    target = FOLDER / f"{name}.inv"
    target.write_bytes(_HEADER.format(project=project, version=version).encode()
                       + zlib.compress(body.encode(), 9))
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="projects to download (default: all four)")
    parser.add_argument("--from", dest="local", action="append", default=[],
                        metavar="NAME=PATH", help="copy a local objects.inv for NAME")
    parser.add_argument("--generate", action="store_true",
                        help="write stand-ins for NAMES (numpy, torch) from the installed packages")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(SITES))
    if unknown:
        parser.error(f"unknown project {unknown[0]!r}: expected one of {sorted(SITES)}")
    status = 0
    if args.local:
        for item in args.local:
            name, _, path = item.partition("=")
            print(f"{name}: copied {path} to {copy_local(name, path)}")
        return status
    if args.generate:
        if set(args.names) - {"numpy", "torch"}:
            parser.error("--generate writes stand-ins for numpy and torch only")
        for name in args.names or ["numpy", "torch"]:
            print(f"{name}: wrote the stand-in {generate(name)}")
        return status
    for name in args.names or sorted(SITES):
        try:
            print(f"{name}: downloaded {download(name)}")
        except (OSError, ValueError) as exc:
            print(f"{name}: kept the shipped file, the download failed: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
