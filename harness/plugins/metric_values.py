"""A metric's value checked once: the scalars it logs by name, or why it cannot be logged.

``harness run`` fails the cell with the message (:mod:`harness.runs.cell`), ``harness
check-plugin`` the metric (:mod:`harness.plugins.testing`): both call :func:`metric_values`.
"""

from __future__ import annotations

import contextlib

import numpy as np

from harness.components import Curve

__all__ = ["MetricValueError", "NonFiniteMetricError", "metric_values"]


class MetricValueError(ValueError):
    """A metric returned no value harness can log: not a real number (a string, which
    ``float()`` would take, a complex number, a list), or an empty dict. The cell is
    recorded as ``failed`` with this message."""


class NonFiniteMetricError(MetricValueError):
    """A metric returned NaN or +-inf: the cell is recorded as ``failed`` with this message
    (a metric that does not apply raises :class:`harness.Skip` instead)."""


def metric_values(name: str, value: object) -> dict[str, float]:
    """The scalars one metric's value logs, by logged name: ``{name: v}`` for a real number
    (Python, NumPy, a 0-d array, a one-element torch tensor), ``{name.key: v}`` for each key
    of a dict, ``{name: value.final}`` for a :class:`Curve`. The one check of a metric's
    value: ``harness run`` fails the cell with its message, ``check-plugin`` the metric.

    :raises MetricValueError: not a real number, or an empty dict.
    :raises NonFiniteMetricError: NaN or +-inf (anywhere in a Curve).
    """
    if isinstance(value, Curve):
        bad = ~np.isfinite(value.values)
        if bad.any():
            step = int(value.steps[np.argmax(bad)])
            raise NonFiniteMetricError(
                f"metric '{name}' returned a curve with {value.values[bad][0]} at step {step}"
            )
        return {name: value.final}
    if isinstance(value, dict):
        if not value:
            raise MetricValueError(f"metric '{name}' returned an empty dict: no value")
        return {f"{name}.{k}": _finite(f"{name}.{k}", v) for k, v in value.items()}
    return {name: _finite(name, value)}


def _finite(name: str, value: object) -> float:
    # float() would take "2.0", np.array("2.0") and the real part of a complex number
    kind = getattr(getattr(value, "dtype", None), "kind", None)  # NumPy; torch has none
    number = None
    if not isinstance(value, (str, bytes, complex)) and kind in (None, *"biuf"):
        with contextlib.suppress(TypeError, ValueError):
            number = float(value)
    if number is None:
        raise MetricValueError(
            f"metric '{name}' returned {value!r} ({type(value).__name__}), not a real number"
        )
    if not np.isfinite(number):
        raise NonFiniteMetricError(f"metric '{name}' returned {number}")
    return number
