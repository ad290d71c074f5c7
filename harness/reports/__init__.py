"""Reports: the numbers behind a suite's results, their tables, and the report folder.

- :func:`write_report`: a suite's report folder (report.md, report.html, CSV and PNG files);
- :func:`summary_stats`, :func:`tidy_results`, :func:`tally`: statistics per configuration
  over seeds, the results as one tidy table, the tally of cells by status;
- :func:`summary_table`: the mean ± CI table by metric, as text.

The modules behind them: ``folder``, ``render`` (with ``templates/``), ``tables``,
``aggregates``.
"""

from harness.reports.aggregates import summary_stats, tally, tidy_results
from harness.reports.folder import write_report
from harness.reports.tables import summary_table

__all__ = ["summary_stats", "summary_table", "tally", "tidy_results", "write_report"]
