"""A small in-test plugin for the core tests (task 'toy'); no paper behind it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness import (
    Cells,
    Claim,
    Curve,
    Dataset,
    Greater,
    Method,
    Metric,
    Rival,
    Select,
    Skip,
    Source,
    Within,
    hookimpl,
)
from harness.claims import PairedGain, Permute, Rate, Transform, stats


@dataclass(frozen=True)
class Draws:
    """``y`` of shape (n,), draws from N(0, scale^2)."""

    y: np.ndarray


class Noise(Dataset):
    """Gaussian draws.

    Source: test fixture.
    """

    name = "noise"
    task = "toy"

    @dataclass
    class Params:
        n: int = 5
        scale: float = 1.0

        def __post_init__(self) -> None:
            if self.n < 1:
                raise ValueError(f"n must be >= 1, got {self.n}")

    def load(self, params: Params, seed: int) -> Draws:
        return Draws(np.random.default_rng(seed).normal(0, params.scale, params.n))

    def describe(self, data: Draws) -> dict:
        return {"n_drawn": len(data.y)}


class Mean(Method):
    """Sample mean plus a shift and a seeded perturbation.

    Source: test fixture.
    """

    name = "mean"
    task = "toy"

    @dataclass
    class Params:
        shift: float = 0.0
        kind: Literal["plain", "noisy"] = "plain"

    def run(self, data: Draws, params: Params, seed: int) -> float:
        noise = np.random.default_rng(seed).normal() if params.kind == "noisy" else 0.0
        return float(data.y.mean()) + params.shift + noise


class Boom(Method):
    """Always raises.

    Source: test fixture.
    """

    name = "boom"
    task = "toy"

    def run(self, data: Draws, params: Method.Params, seed: int) -> float:
        raise RuntimeError("boom: this method always fails")


class Sleepy(Method):
    """Sleeps.

    Source: test fixture.
    """

    name = "sleepy"
    task = "toy"
    test_params = {"seconds": 0.0}  # noqa: RUF012 - what check-plugin runs

    @dataclass
    class Params:
        seconds: float = 30.0

    def run(self, data: Draws, params: Params, seed: int) -> float:
        time.sleep(params.seconds)
        return 0.0


class Skipper(Method):
    """Never applies.

    Source: test fixture.
    """

    name = "skipper"
    task = "toy"

    def run(self, data: Draws, params: Method.Params, seed: int) -> float:
        raise Skip("skipper never applies")


class AbsError(Metric):
    """|estimate|, since the true mean is 0.

    Source: test fixture.
    """

    name = "abs-error"
    task = "toy"
    higher_is_better = False

    def compute(self, data: Draws, output: float) -> float:
        return abs(output)


class Stats(Metric):
    """Two named scalars.

    Source: test fixture.
    """

    name = "stats"
    task = "toy"

    def compute(self, data: Draws, output: float) -> dict[str, float]:
        return {"min": float(data.y.min()), "max": float(data.y.max())}


class Path(Metric):
    """Cumulative mean as a curve.

    Source: test fixture.
    """

    name = "path"
    task = "toy"

    def compute(self, data: Draws, output: float) -> Curve:
        return Curve(np.cumsum(data.y) / np.arange(1, data.y.size + 1))


class Scaled(Metric):
    """|estimate| times a scale (a metric with a param).

    Source: test fixture.
    """

    name = "scaled"
    task = "toy"

    @dataclass
    class Params:
        scale: float = 1.0

    def compute(self, data: Draws, output: float) -> float:
        return abs(output) * self.params.scale


class BadValue(Metric):
    """Returns `value` (set it to nan or inf in a suite) in the shape asked for.

    Source: test fixture.
    """

    name = "bad-value"
    task = "toy"

    @dataclass
    class Params:
        value: float = 1.0
        shape: Literal["scalar", "dict", "curve"] = "scalar"

    def compute(self, data: Draws, output: float) -> float | dict[str, float] | Curve:
        if self.params.shape == "dict":
            return {"fine": 1.0, "broken": self.params.value}
        if self.params.shape == "curve":
            return Curve(np.array([0.5, self.params.value, 1.0]))
        return self.params.value


class Fragile(Method):
    """Fails when the environment variable TOY_FRAGILE_FAIL is set (a rerun that fails).

    Source: test fixture.
    """

    name = "fragile"
    task = "toy"

    def run(self, data: Draws, params: Method.Params, seed: int) -> float:
        if os.environ.get("TOY_FRAGILE_FAIL"):
            raise RuntimeError("fragile: TOY_FRAGILE_FAIL is set")
        return float(data.y.mean())


class Never(Metric):
    """Never applies.

    Source: test fixture.
    """

    name = "never"
    task = "toy"

    def compute(self, data: Draws, output: float) -> float:
        raise Skip("never applies to toy data")


class Other(Metric):
    """A metric of another task.

    Source: test fixture.
    """

    name = "other-metric"
    task = "other"

    def compute(self, data: object, output: object) -> float:
        return 0.0


# -- claims: one of each verdict on the suite tests/test_claims.py runs (noise n=40 only) ----

CLAIM_DATA = {"n": 40}
TOY_SOURCE = Source("Toy fixture of harness's tests", "", "no paper")


PLAIN = Select("mean", method_params={"shift": 0.0, "kind": "plain"})
SHIFTED = Select("mean", method_params={"shift": 1.0, "kind": "plain"})
NOISY = Select("mean", method_params={"shift": 0.0, "kind": "noisy"})


def _exchange_shift(results, metric):
    """The control: shift 0 and shift 1 trade their rows (the effect must reverse)."""
    shift = results["method.shift"].astype(float)
    return results.assign(**{"method.shift": np.where(shift == 1.0, "0.0", "1.0")})


class ShiftCostsAccuracy(Claim):
    """A shifted mean has a larger absolute error than the plain mean (reproduced).

    Source: test fixture.
    """

    name = "shift-raises-error"
    task = "toy"
    source = TOY_SOURCE
    statement = "mean(shift=1) has a larger abs-error than mean(shift=0), paired over seeds."
    requires = (
        Cells("noise", ("mean",), CLAIM_DATA, {"shift": [0.0, 1.0], "kind": "plain"}, min_seeds=5),
    )
    metric = "abs-error"
    unit = "seed"
    subject = SHIFTED
    kind = PairedGain(baseline=PLAIN)
    hypothesis = Greater(0.0)
    control = Transform(_exchange_shift, "shift 0 and shift 1 exchanged")


class ShiftGainsAccuracy(ShiftCostsAccuracy):
    """The reverse of :class:`ShiftCostsAccuracy` (not reproduced).

    Source: test fixture.
    """

    name = "shift-lowers-error"
    statement = "mean(shift=0) has a larger abs-error than mean(shift=1) (it does not)."
    kind = PairedGain(baseline=PLAIN, higher_is_better=False)


class NoisyMatchesPlain(ShiftCostsAccuracy):
    """Noisy and plain means have equal abs-error within 0.01 (too few seeds: inconclusive).

    Source: test fixture.
    """

    name = "noisy-matches-plain"
    statement = "mean(kind=noisy) has the abs-error of mean(kind=plain) within 0.01."
    requires = (Cells("noise", ("mean",), CLAIM_DATA, {"shift": 0.0}, min_seeds=5),)
    subject = NOISY
    hypothesis = Within(0.0, 0.01)


class ErrorIsNonNegative(ShiftCostsAccuracy):
    """A claim nothing can fail: absolute errors are non-negative (uninformative: its
    randomised control holds too).

    Source: test fixture.
    """

    name = "error-is-non-negative"
    statement = "More than half of the seeds have a non-negative abs-error."
    subject = SHIFTED
    kind = Rate(threshold=-1e-12)
    hypothesis = Greater(0.5)
    control = Permute("abs-error", within=())


class ShiftBeatsNoRival(ShiftCostsAccuracy):
    """The shift claim with a rival that has no shift but noise: it raises the error too, so
    the claim cannot say the shift is what does it (uninformative).

    Source: test fixture.
    """

    name = "shift-rival-noise"
    statement = "Only the shift raises abs-error over the plain mean (noise does too)."
    rivals = (Rival("mean", {"shift": 0.0, "kind": "noisy"}, why="noise, no shift"),)


class NeedsFragile(ShiftCostsAccuracy):
    """Needs cells of 'fragile' the claims suite does not have (not run).

    Source: test fixture.
    """

    name = "needs-fragile"
    requires = (*ShiftCostsAccuracy.requires, Cells("noise", ("fragile",), CLAIM_DATA))


class BrokenClaim(ShiftCostsAccuracy):
    """Reads a metric no cell logs (error).

    Source: test fixture.
    """

    name = "broken-claim"
    metric = "no-such-metric"


class LegacyShiftCostsAccuracy(Claim):
    """The shift claim written against the first contract (its own statistic and
    control), still evaluated (reproduced).

    Source: test fixture.
    """

    name = "legacy-shift-raises-error"
    task = "toy"
    source = TOY_SOURCE
    statement = "mean(shift=1) has a larger abs-error than mean(shift=0), paired over seeds."
    requires = ShiftCostsAccuracy.requires
    hypothesis = Greater(0.0)
    control_description = "shift 0 and shift 1 exchanged"
    subject = "mean"

    def statistic(self, results):
        def errors(shift):
            rows = results[results["method.shift"].astype(float).eq(shift)]
            return rows.sort_values("seed")["abs-error"].to_numpy()

        return stats.paired_difference(errors(1.0), errors(0.0))

    def control(self, results):
        return _exchange_shift(results, "abs-error")


@hookimpl
def harness_claims():
    return [ShiftCostsAccuracy, ShiftGainsAccuracy, NoisyMatchesPlain, ErrorIsNonNegative,
            ShiftBeatsNoRival, NeedsFragile, BrokenClaim, LegacyShiftCostsAccuracy]  # fmt: skip


@hookimpl
def harness_datasets():
    return [Noise]


@hookimpl
def harness_methods():
    return [Mean, Boom, Sleepy, Skipper, Fragile]


@hookimpl
def harness_metrics():
    return [AbsError, Stats, Path, Never, Other, Scaled, BadValue]
