"""Paper claims: declarations the core tests, with rivals and controls that must fail.

The public names of the claims contract (docs/design.md, "Claims"); the modules behind
them are private to the core:

- :class:`Claim`, :class:`Cells`, :class:`Source`, :class:`Rival`, :class:`Select`: the
  declaration and what it reads;
- kinds :class:`Mean`, :class:`PairedGain`, :class:`LogLogSlope`, :class:`Ratio`,
  :class:`Rate`, :class:`Statistic`: what is measured over the units;
- hypotheses :class:`Greater`, :class:`Less`, :class:`Within`: the test, the margin once;
- controls :class:`Swap`, :class:`UseMetric`, :class:`Permute`, :class:`Transform`,
  :class:`Randomised`: what must fail;
- :func:`evaluate_claims`, :class:`Verdict`, :class:`Outcome`, :class:`Status`;
- :func:`swap`, :func:`unit_values`, :func:`paired`, :func:`param_matches` for a custom
  :class:`Statistic`, and the samples :class:`TSample`, :class:`BinomialSample`.

Beside them: ``verdicts`` (a claim's verdict and the verdict table), ``stats`` (the paired
tests, TOST, slopes and Holm the claims run), ``evidence`` (which claims a suite touches,
their cells, results read back from exports).
"""

from harness.claims.contract import Cells, Claim, Rival, Source, estimate_problems
from harness.claims.controls import Control, Permute, Randomised, Swap, Transform, UseMetric
from harness.claims.family import evaluate_claims, family_of
from harness.claims.hypotheses import ALPHA, Greater, Hypothesis, Less, Within
from harness.claims.kinds import Kind, LogLogSlope, Mean, PairedGain, Rate, Ratio, Statistic
from harness.claims.samples import BinomialSample, Sample, TSample
from harness.claims.selection import Select, paired, param_matches, swap, unit_values
from harness.claims.verdicts import Outcome, Status, Verdict, verdicts_markdown

__all__ = [
    "ALPHA",
    "BinomialSample",
    "Cells",
    "Claim",
    "Control",
    "Greater",
    "Hypothesis",
    "Kind",
    "Less",
    "LogLogSlope",
    "Mean",
    "Outcome",
    "PairedGain",
    "Permute",
    "Randomised",
    "Rate",
    "Ratio",
    "Rival",
    "Sample",
    "Select",
    "Source",
    "Statistic",
    "Status",
    "Swap",
    "TSample",
    "Transform",
    "UseMetric",
    "Verdict",
    "Within",
    "estimate_problems",
    "evaluate_claims",
    "family_of",
    "paired",
    "param_matches",
    "swap",
    "unit_values",
    "verdicts_markdown",
]
