"""Deterministic stand-in data files in the formats of MXNet's sparse example programs.

No ``mx`` here: the same functions run under sparsenet's interpreter and under
MXNet 1.9.1's (``run_mxnet.py``), and write byte-identical files (NumPy's
``RandomState`` stream is fixed across NumPy versions). Each file carries a
learnable signal so that training lowers the loss.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "ratings.dat")
>>> write_movielens(path, 3, seed=1)
>>> len(open(path).read().splitlines())
3
"""
import hashlib

import numpy as np

# UCI Adult's vocabularies (the columns the wide & deep program reads by value).
WORKCLASS = ["Self-emp-not-inc", "Private", "State-gov", "Federal-gov", "Local-gov", "?",
             "Self-emp-inc", "Without-pay", "Never-worked"]
EDUCATION = ["Bachelors", "HS-grad", "11th", "Masters", "9th", "Some-college", "Assoc-acdm",
             "Assoc-voc", "7th-8th", "Doctorate", "Prof-school", "5th-6th", "10th", "1st-4th",
             "Preschool", "12th"]
MARITAL = ["Married-civ-spouse", "Divorced", "Married-spouse-absent", "Never-married",
           "Separated", "Married-AF-spouse", "Widowed"]
RELATIONSHIP = ["Husband", "Not-in-family", "Wife", "Own-child", "Unmarried", "Other-relative"]
OCCUPATION = ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
              "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
              "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
              "Armed-Forces"]
RACE = ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]
GENDER = ["Female", "Male"]
COUNTRY = ["United-States", "Cuba", "Jamaica", "India", "Mexico", "Germany", "Philippines",
           "Canada", "England", "China", "?"]
EDUCATION_NUM = {e: n for e, n in zip(
    ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
     "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school",
     "Doctorate"], range(1, 17))}


def sha256(path):
    """Hex SHA-256 of a file (tests pin the data the MXNet numbers were measured on)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_adult(path, n, seed, test=False):
    """``n`` rows of UCI Adult CSV (``adult.data``; ``test=True``: ``adult.test``'s labels).

    Fifteen comma-and-space separated columns as the real file; the label
    ``<=50K``/``>50K`` (``<=50K.``/``>50K.`` in the test file, whose header line
    MXNet's program deletes is left out) follows a logistic model of education,
    age, hours, gender, marital status and capital gain.
    """
    rng = np.random.RandomState(seed)
    age = rng.randint(17, 91, n)
    work = rng.choice(len(WORKCLASS), n, p=[.08, .69, .04, .03, .06, .05, .03, .01, .01])
    edu = rng.randint(0, len(EDUCATION), n)
    marital = rng.randint(0, len(MARITAL), n)
    occ = rng.randint(0, len(OCCUPATION), n)
    rel = rng.randint(0, len(RELATIONSHIP), n)
    race = rng.randint(0, len(RACE), n)
    gender = rng.randint(0, 2, n)
    gain = np.where(rng.rand(n) < 0.1, rng.randint(1, 20000, n), 0)
    loss = np.where(rng.rand(n) < 0.05, rng.randint(1, 3000, n), 0)
    hours = np.clip(rng.normal(40, 12, n).round(), 1, 99).astype(int)
    country = rng.randint(0, len(COUNTRY), n)
    fnlwgt = rng.randint(10000, 1500000, n)
    edu_num = np.array([EDUCATION_NUM[EDUCATION[e]] for e in edu])
    score = (0.35 * (edu_num - 10) + 0.04 * (age - 38) + 0.03 * (hours - 40) + 0.5 * gender
             + 1.2 * (marital == 0) + 2.0 * (gain > 5000) - 1.0 + rng.normal(0, 1, n))
    rich = score > 0
    suffix = "." if test else ""
    with open(path, "w") as f:
        for i in range(n):
            label = (">50K" if rich[i] else "<=50K") + suffix
            f.write(f"{age[i]}, {WORKCLASS[work[i]]}, {fnlwgt[i]}, {EDUCATION[edu[i]]}, "
                    f"{edu_num[i]}, {MARITAL[marital[i]]}, {OCCUPATION[occ[i]]}, "
                    f"{RELATIONSHIP[rel[i]]}, {RACE[race[i]]}, {GENDER[gender[i]]}, {gain[i]}, "
                    f"{loss[i]}, {hours[i]}, {COUNTRY[country[i]]}, {label}\n")


def _write_libsvm(path, labels, cols, chunk=20000):
    with open(path, "w") as f:
        for a in range(0, len(labels), chunk):
            lines = []
            for y, row in zip(labels[a:a + chunk], cols[a:a + chunk]):
                lines.append(str(int(y)) + " " + " ".join(f"{c}:1" for c in row))
            f.write("\n".join(lines) + "\n")


def _click_data(n, seed, num_features, fields, one_based):
    """Categorical click rows: one feature per field, popular ids drawn more often."""
    rng = np.random.RandomState(seed)
    field_size = (num_features - 1) // fields
    # Zipf-like draw inside each field, so ids recur across rows.
    rank = np.minimum((rng.pareto(1.2, size=(n, fields)) * 3).astype(np.int64), field_size - 1)
    cols = rank + np.arange(fields, dtype=np.int64) * field_size + (1 if one_based else 0)
    cols.sort(axis=1)
    # Each (field, rank) has a hidden effect; clicks follow the summed effect.
    effect = np.random.RandomState(seed + 1).normal(0, 1, size=(fields, 64))
    logit = effect[np.arange(fields), np.minimum(rank, 63)].sum(axis=1) / np.sqrt(fields) - 1.0
    labels = (rng.rand(n) < 1 / (1 + np.exp(-2 * logit))).astype(int)
    return labels, cols


def write_avazu(path, n, seed, num_features=1000000, fields=15):
    """``n`` rows of Avazu-app LibSVM: label 0/1, ``fields`` ``idx:1`` features, 1-based ids."""
    labels, cols = _click_data(n, seed, num_features, fields, one_based=True)
    _write_libsvm(path, labels, cols)


def write_criteo(path, n, seed, num_features=1000000, fields=39):
    """``n`` rows of Criteo LibSVM: label 0/1, ``fields`` ``idx:1`` features, ids below
    ``num_features``."""
    labels, cols = _click_data(n, seed, num_features, fields, one_based=False)
    _write_libsvm(path, labels, cols)


def write_movielens(path, n, seed, max_user=71569, max_movie=65135):
    """``n`` MovieLens-10M ratings, ``user::movie::rating::timestamp`` (ratings 0.5 to 5)."""
    rng = np.random.RandomState(seed)
    users = np.minimum((rng.pareto(1.0, n) * 50).astype(np.int64) + 1, max_user - 1)
    movies = np.minimum((rng.pareto(1.0, n) * 30).astype(np.int64) + 1, max_movie - 1)
    ub = np.random.RandomState(seed + 1).normal(0, 0.6, max_user)
    mb = np.random.RandomState(seed + 2).normal(0, 0.6, max_movie)
    stars = np.clip(np.round(2 * (3.5 + ub[users] + mb[movies] + rng.normal(0, 0.5, n))) / 2,
                    0.5, 5.0)
    stamps = 1000000000 + rng.randint(0, 100000000, n)
    with open(path, "w") as f:
        for a in range(0, n, 20000):
            f.write("".join(f"{u}::{m}::{s:g}::{t}\n" for u, m, s, t in zip(
                users[a:a + 20000], movies[a:a + 20000], stars[a:a + 20000],
                stamps[a:a + 20000])))
