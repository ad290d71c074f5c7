"""The authors' committed per-model results, for comparison with this plugin's suites.

Source: Hur & Park, ICML 2025, official code ``takh04/Q-margin`` (commit 96301b08),
``QPR/results_correlation/Cluster/r=<r>/num_qubits=10/others/*.npy``; see ``data/DATA.md``.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["SOURCE", "authors_cluster_10q", "authors_results"]

SOURCE = "takh04/Q-margin"


def authors_cluster_10q() -> pd.DataFrame:
    """The authors' 375 models on the 10-qubit, 4-class Cluster set, one row per model.

    Returns
    -------
    pandas.DataFrame
        375 rows (3 ansätze × L ∈ {1, 3, 5, 7, 9} × 5 experiments × 5 noise levels) with the
        columns of a harness results table: ``dataset``, ``method``, ``method.shared``,
        ``method.layers``, ``seed``, ``status``, ``dataset.noise``, ``dataset.n_qubits`` and
        the metrics ``generalization-gap``, ``train-accuracy``, ``test-accuracy``,
        ``margin-q25``, ``margin-q50``, ``margin-mean``, ``parameter-count``,
        ``effective-parameters.above-0.1``, ``effective-parameters.above-0.01`` (no Q3), plus
        ``ansatz`` (the authors' name). Accuracies are fractions of 20 train / 1,000 test
        states.
    """
    path = resources.files("harness_margin_qml") / "data" / "authors_cluster_10q.csv"
    with resources.as_file(path) as f:
        return pd.read_csv(f, dtype={"method.shared": str}, keep_default_na=False)


def authors_results() -> pd.DataFrame:
    """:func:`authors_cluster_10q` as a ``harness results`` table: ``task`` added, params as
    strings (``dataset.noise`` ``"1.0"``, ``method.layers`` ``"9"``, ...) and
    ``dataset.source`` = ``"takh04/Q-margin"`` (no suite's cell has it: these rows are no
    harness cells, and no claim reads them; ``results/README.md`` describes them).

    Returns
    -------
    pandas.DataFrame
        375 rows; ``plugins/margin-qml/results/authors-cluster-10q.parquet`` holds it.
    """
    df = authors_cluster_10q()
    df.insert(0, "task", "margin-qml")
    df["dataset.source"] = SOURCE
    df["dataset.noise"] = df["dataset.noise"].astype(float).map(str)
    df["seed"] = df["seed"].astype("Int64")
    for column in df.columns:
        if column.startswith(("dataset.", "method.")):
            df[column] = df[column].astype(str)
        elif df[column].dtype.kind == "i" and column != "seed":
            df[column] = df[column].astype(float)  # metrics are floats in a results table
    return df
