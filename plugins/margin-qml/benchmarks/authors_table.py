"""Our 10-qubit Cluster results side by side with the authors' committed ones (README).

Reads the report of ``suites/paper/margin-qml-paper.yaml``
(``margin-qml-generalisation-measures.csv``,
``margin-qml-claim.csv`` and ``margin-qml-accuracy.csv`` in its folder), recomputes the same
figures from the authors' 375 committed models (``reference.authors_cluster_10q``, with the
report's own :func:`~harness_margin_qml.reports.measure_table`: 2,000 permutations, seed 0)
and prints, per noise level r, Markdown tables: Kendall τ, plug-in MI, MI in excess of the
permutation null and its p for each measure, the verdict "margins predict the gap better
than parameter counts" with its family-wise p, and mean accuracies per architecture.

Run: ``python plugins/margin-qml/benchmarks/authors_table.py REPORT_DIR`` where REPORT_DIR
holds the CSVs above (``harness report suites/paper/margin-qml-paper.yaml`` writes them under
``reports/margin-qml-paper``). Not collected by pytest.
"""

import sys
from pathlib import Path

import pandas as pd

ROWS = ["mean", "Q1", "Q2", "Q3", "#params", "eff>0.1", "eff>0.01", "shuffled-margin"]
ARCHITECTURES = {
    ("qcnn", "false"): "QCNN unshared",
    ("qcnn", "true"): "QCNN shared",
    ("strongly-entangling", ""): "SEL",
}


def _p(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}".replace("0.", ".", 1)


def _cell(row: pd.Series | None) -> str:
    """``τ / MI / excess (p)`` with two decimals, as in the README's tables."""
    if row is None:
        return "(not saved)"
    tau, mi, excess = (f"{v:+.2f}" for v in (row.kendall_tau, row.mi_bits, row.mi_excess))
    return f"{tau} / {mi.lstrip('+')} / {excess} ({_p(row.mi_p)})"


def _verdict(row: pd.Series) -> str:
    said = "**yes**" if bool(row["margins predict better"]) else "no"
    return (
        f"{said} (margin p {_p(row['margin family p'])}): {row['best margin']}"
        f" {row['margin excess MI (bits)']:+.2f} vs {row['best parameter count']}"
        f" {row['parameter excess MI (bits)']:+.2f}"
    )


def _accuracies(results: pd.DataFrame) -> pd.DataFrame:
    """Mean train and test accuracy per (r, architecture) over depths and seeds."""
    shared = results["method.shared"].astype(str).str.lower().replace({"nan": ""})
    keys = list(zip(results["method"], shared, strict=True))
    frame = pd.DataFrame(
        {
            "noise": results["noise"].astype(float),
            "architecture": [ARCHITECTURES.get(k, "/".join(k)) for k in keys],
            "train": results["train-accuracy"].astype(float),
            "test": results["test-accuracy"].astype(float),
        }
    )
    return frame.groupby(["noise", "architecture"])[["train", "test"]].mean()


def main(report_dir: str) -> None:
    from harness_margin_qml._reference import authors_cluster_10q
    from harness_margin_qml.reports import measure_table

    folder = Path(report_dir)
    ours = pd.read_csv(folder / "margin-qml-generalisation-measures.csv", dtype={"noise": str})
    ours = ours[(ours["dataset"] == "cluster-phases") & (ours["n_qubits"] == 10)]
    claim = pd.read_csv(folder / "margin-qml-claim.csv", dtype={"noise": str})
    claim = claim[(claim["dataset"] == "cluster-phases") & (claim["n_qubits"] == 10)]
    authors_results = authors_cluster_10q()
    theirs, their_claim = measure_table(authors_results, n_perm=2000, n_boot=0, seed=0)
    levels = [r for r in ours["noise"].unique() if r != "pooled"]
    print("| r | measure | ours (re-trained, 10 qubits) | authors (committed results) |")
    print("|---|---|---|---|")
    for r in sorted(levels, key=float):
        mine = ours[ours["noise"] == r].set_index("measure")
        them = theirs[theirs["noise"] == r].set_index("measure")
        n_ours, n_theirs = int(mine["n"].iloc[0]), int(them["n"].iloc[0])
        for label in ROWS:
            a = mine.loc[label] if label in mine.index else None
            b = them.loc[label] if label in them.index else None
            print(f"| {r} | {label} | {_cell(a)} | {_cell(b)} |")
        verdict_ours = claim.set_index("noise").loc[r]
        verdict_theirs = their_claim.set_index("noise").loc[r]
        print(
            f"| {r} | verdict (models: {n_ours} / {n_theirs}) | {_verdict(verdict_ours)}"
            f" | {_verdict(verdict_theirs)} |"
        )
    print()
    accuracy = pd.read_csv(folder / "margin-qml-accuracy.csv", dtype={"method.shared": str})
    accuracy = accuracy[accuracy["dataset"] == "cluster-phases"]
    ours_acc = _accuracies(accuracy)
    authors_results = authors_results.assign(noise=authors_results["dataset.noise"])
    theirs_acc = _accuracies(authors_results)
    print("| r | architecture | ours train / test | authors train / test |")
    print("|---|---|---|---|")
    for (r, arch), row in ours_acc.iterrows():
        them = theirs_acc.loc[(r, arch)] if (r, arch) in theirs_acc.index else None
        theirs_text = "—" if them is None else f"{them.train:.2f} / {them.test:.3f}"
        print(f"| {r:g} | {arch} | {row.train:.2f} / {row.test:.3f} | {theirs_text} |")


if __name__ == "__main__":
    main(*sys.argv[1:2])
