"""Deliberately broken components for the toy task: each breaks one check-plugin rule."""

from __future__ import annotations

from harness import Method, Metric, Report, hookimpl


class NoAnnotation(Method):
    """Returns a string and has no return annotation.

    Source: test fixture.
    """

    name = "no-annotation"
    task = "toy"

    def run(self, data, params, seed):
        return "not a float"


class WrongType(Method):
    """Annotated float, returns a list.

    Source: test fixture.
    """

    name = "wrong-type"
    task = "toy"

    def run(self, data, params, seed) -> float:
        return [1.0]  # type: ignore[return-value]


class NanOnSome(Metric):
    """NaN on the output of the 'sleepy' method only (exactly 0.0), finite elsewhere.

    Source: test fixture.
    """

    name = "nan-on-some"
    task = "toy"

    def compute(self, data, output: float) -> float:
        return float("nan") if output == 0.0 else 0.0


class RaisingReport(Report):
    """Build raises.

    Source: test fixture.
    """

    name = "raising-report"
    task = "toy"

    def build(self, results, curves):
        raise KeyError("method.alpha")


@hookimpl
def harness_methods():
    return [NoAnnotation, WrongType]


@hookimpl
def harness_metrics():
    return [NanOnSome]


@hookimpl
def harness_reports():
    return [RaisingReport]
