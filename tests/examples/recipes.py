"""Which data each example program runs on, and with which options: one recipe per size.

A recipe writes the program's data files into a directory (``datagen``) and
returns the keyword arguments of the program's ``train``. The tests run the
``small`` recipes (a few seconds each), ``benchmarks/bench_examples.py`` the
``bench`` ones, and ``run_mxnet.py`` runs either under MXNet 1.9.1 on the same
files.

>>> sorted(RECIPES)
['factorization_machine', 'linear_classification', 'matrix_factorization', 'wide_deep']
"""
import os
from functools import partial

from tests.examples import datagen


def _wide_deep(data_dir, n_train, n_test, num_epoch):
    datagen.write_adult(os.path.join(data_dir, "adult.data"), n_train, seed=1)
    datagen.write_adult(os.path.join(data_dir, "adult.test"), n_test, seed=2, test=True)
    return {"num_epoch": num_epoch, "batch_size": 100}


def _linear(data_dir, n_train, n_test, num_epoch, batch_size):
    datagen.write_avazu(os.path.join(data_dir, "avazu-app"), n_train, seed=3)
    datagen.write_avazu(os.path.join(data_dir, "avazu-app.t"), n_test, seed=4)
    return {"num_epoch": num_epoch, "batch_size": batch_size}


def _fm(data_dir, n_train, n_test, num_epoch, batch_size, input_size):
    train, test = os.path.join(data_dir, "criteo.tr"), os.path.join(data_dir, "criteo.t")
    datagen.write_criteo(train, n_train, seed=5, num_features=input_size)
    datagen.write_criteo(test, n_test, seed=6, num_features=input_size)
    return {"data_train": train, "data_test": test, "num_epoch": num_epoch,
            "batch_size": batch_size, "input_size": input_size}


def _mf(data_dir, n_train, n_test, num_epoch, batch_size, factor_size):
    os.makedirs(os.path.join(data_dir, "ml-10M100K"), exist_ok=True)
    datagen.write_movielens(os.path.join(data_dir, "ml-10M100K", "r1.train"), n_train, seed=7)
    datagen.write_movielens(os.path.join(data_dir, "ml-10M100K", "r1.test"), n_test, seed=8)
    return {"num_epoch": num_epoch, "batch_size": batch_size, "factor_size": factor_size}


RECIPES = {
    # small: the tests (a few seconds); bench: bench_examples.py, MXNet's default model
    # sizes and batch sizes (train.py's defaults), more rows
    "wide_deep": {
        "small": partial(_wide_deep, n_train=2000, n_test=1000, num_epoch=1),
        "bench": partial(_wide_deep, n_train=32000, n_test=1000, num_epoch=1),
    },
    "linear_classification": {
        "small": partial(_linear, n_train=3072, n_test=1024, num_epoch=2, batch_size=512),
        # train.py's default batch 8192 makes MXNet 1.9.1's pip build fail (a 8192 x
        # 1,000,001 CSR batch is over its 2^31-element shape limit); 2048 is under it
        "bench": partial(_linear, n_train=200704, n_test=8192, num_epoch=1, batch_size=2048),
    },
    "factorization_machine": {
        "small": partial(_fm, n_train=3000, n_test=1000, num_epoch=2, batch_size=500,
                         input_size=20000),
        "bench": partial(_fm, n_train=20000, n_test=1000, num_epoch=1, batch_size=1000,
                         input_size=1000000),
    },
    "matrix_factorization": {
        "small": partial(_mf, n_train=3000, n_test=1024, num_epoch=1, batch_size=128,
                         factor_size=16),
        "bench": partial(_mf, n_train=50000, n_test=1024, num_epoch=1, batch_size=128,
                         factor_size=128),
    },
}


def prepare(program, recipe, data_dir, **overrides):
    """Write ``program``'s ``recipe`` data into ``data_dir``; the ``train`` keyword arguments.

    ``overrides`` replace the recipe's own sizes (e.g. ``input_size`` of the
    factorization machine); see the recipe functions for their names.
    """
    os.makedirs(data_dir, exist_ok=True)
    return RECIPES[program][recipe](data_dir, **overrides)
