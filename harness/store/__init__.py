"""The store: where runs are written and read back (MLflow's layout, one ``Store`` protocol).

- :class:`Tracker`: a command's store, the writer (suites' parent runs, cell runs, resume);
- :class:`StoreReader`: the reading side (what is done, results, curves, logged suites);
- :class:`Store` and :func:`open_store`: the protocol, its backend (MLflow's client or direct
  SQLite) chosen once;
- :func:`check_store`, :func:`sqlite_path`, :func:`store_lock`: the preflight check of a store's
  URI before the first cell, and its creation lock (the names ``harness.store`` held when it
  was one module);
- :func:`ui_link`: where a run is seen in MLflow's UI.

The modules behind them: ``tracking``, ``current`` (why a cell has no current result),
``readback``, ``backends``, ``mlflow_store``,
``sqlite_store``, ``sqlite_direct``, ``layout``, ``liveness``, ``preflight``, ``server``.
"""

from harness.store.backends import Store, open_store
from harness.store.layout import ui_link
from harness.store.preflight import (
    BUSY_TIMEOUT_S,
    CHECK_TIMEOUT_S,
    FileIdentity,
    check_store,
    driver_problem,
    lost_message,
    sqlite_path,
    store_failure,
    store_lock,
)
from harness.store.readback import StoreReader
from harness.store.tracking import Tracker, connection_lost, resolve_uri

__all__ = [
    "BUSY_TIMEOUT_S",
    "CHECK_TIMEOUT_S",
    "FileIdentity",
    "Store",
    "StoreReader",
    "Tracker",
    "check_store",
    "connection_lost",
    "driver_problem",
    "lost_message",
    "open_store",
    "resolve_uri",
    "sqlite_path",
    "store_failure",
    "store_lock",
    "ui_link",
]
