"""Suites: a YAML file read defensively, validated, changed by the command line, expanded.

- :func:`load_suite` and :func:`load_logged_suite`: a suite file (or the copy a run logged)
  to a :class:`Suite` of counted, expanded cells;
- :class:`Cell`: one cell, its hashes (the resume key) and derived seeds;
- :class:`Overrides`: the command line's changes (``--set``, ``--seeds``, selections);
- :func:`parse_duration`: ``"90s"``, ``"2m"``, ``"1h"`` to seconds.

The modules behind them: ``loading``, ``overrides``, ``expansion``, ``schema``, ``identity``,
``safe_yaml``.
"""

from harness.suites.identity import Cell
from harness.suites.loading import Suite, load_logged_suite, load_suite
from harness.suites.overrides import Overrides
from harness.suites.schema import parse_duration

__all__ = ["Cell", "Overrides", "Suite", "load_logged_suite", "load_suite", "parse_duration"]
