"""Every claim's verdict on the committed evidence is what it was when the snapshot was
taken: status, estimate, interval, p-values (raw and Holm-adjusted), control, rivals and
reason, for all claims of ``suites/all.yaml`` over every paper plugin's
``results/<plugin>.parquet`` (what ``make claims`` reads). A change of the core made for
speed must leave this table as it is.

The snapshot is ``data/all_verdicts.json``, with the digest and tasks of each evidence file
it was taken from: the claims of a task whose evidence was re-made since are left out (and
named in a warning); ``python tests/claims/test_verdict_snapshot.py`` writes it anew (when
evidence was re-made, or a verdict is meant to change). Deliberately wrong variant, run
when this test was written: the normal quantile in place of Student's t in
``harness.claims.samples.t_quantile`` (a plausible slip when the scipy.stats calls became
scipy.special ones) gives 306 differences (every t interval and MDE), named here.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import warnings
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("data") / "all_verdicts.json"
REL = 1e-12
"""Floats agree to this relative difference (a sum taken in another order moves the last
bits; any change of method moves far more)."""


def _evidence() -> list[Path]:
    files = sorted(ROOT.glob("plugins/*/results/*.parquet"))
    return [f for f in files if f.stem == f.parent.parent.name]  # each plugin's main suite


def _digests() -> dict[str, dict[str, Any]]:
    """``{evidence file: {"sha256": ..., "tasks": [...]}}``."""
    import pandas as pd

    out = {}
    for file in _evidence():
        tasks = sorted(map(str, pd.read_parquet(file, columns=["task"])["task"].unique()))
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
        out[str(file.relative_to(ROOT))] = {"sha256": digest, "tasks": tasks}
    return out


def _verdicts(skip: Collection[str] = ()) -> list[dict[str, Any]]:
    """``harness claims suites/all.yaml --results ... --format json``, in its own process
    with every installed plugin (as ``make claims`` runs it), ``run_ids`` as a count and a
    digest."""
    args = [str(Path(sys.executable).parent / "harness"), "claims", "suites/all.yaml"]
    for file in _evidence():
        if str(file.relative_to(ROOT)) not in skip:  # re-made evidence: its claims not run
            args += ["--results", str(file.relative_to(ROOT))]
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_DISABLE_PLUGINS"}
    printed = subprocess.run([*args, "--format", "json"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    out = []
    for verdict in json.loads(printed.stdout):
        ids = sorted(verdict.pop("run_ids"))
        verdict["run_ids"] = [len(ids), hashlib.sha256("\n".join(ids).encode()).hexdigest()]
        out.append(verdict)
    return out


def _differences(was: Any, now: Any, where: str) -> list[str]:
    if isinstance(was, dict) and isinstance(now, dict):
        if set(was) != set(now):
            return [f"{where}: keys {sorted(set(was) ^ set(now))} differ"]
        return [d for k in was for d in _differences(was[k], now[k], f"{where}.{k}")]
    if isinstance(was, list) and isinstance(now, list):
        if len(was) != len(now):
            return [f"{where}: {len(was)} items, now {len(now)}"]
        return [d for i, (a, b) in enumerate(zip(was, now, strict=True))
                for d in _differences(a, b, f"{where}[{i}]")]  # fmt: skip
    if isinstance(was, float) and isinstance(now, (int, float)) and not isinstance(now, bool):
        if math.isnan(was) and math.isnan(now):
            return []
        if math.isclose(was, now, rel_tol=REL, abs_tol=1e-300):
            return []
    elif was == now:
        return []
    return [f"{where}: {was!r} -> {now!r}"]


def test_every_verdict_on_the_committed_evidence_is_unchanged():
    from harness.plugins.registry import build_registry

    plugins = {p.name for p in ROOT.glob("plugins/*") if (p / "pyproject.toml").is_file()}
    missing = plugins - set(build_registry().plugins)
    if missing:
        pytest.skip(f"plugins not installed here: {', '.join(sorted(missing))}")
    snapshot = json.loads(SNAPSHOT.read_text())
    now_evidence = _digests()
    remade = sorted(f for f, was in snapshot["evidence"].items()
                    if now_evidence.get(f, {}).get("sha256") != was["sha256"])  # fmt: skip
    stale = {t for f in remade for t in snapshot["evidence"][f]["tasks"]}
    stale |= {t for f in remade for t in now_evidence.get(f, {}).get("tasks", [])}
    if remade:
        warnings.warn(f"evidence re-made since the snapshot: {', '.join(remade)}; its claims"
                      " are left out (python tests/claims/test_verdict_snapshot.py writes the"
                      " snapshot anew)", stacklevel=1)  # fmt: skip
    was = {v["claim"]: v for v in snapshot["verdicts"] if v["task"] not in stale}
    if not was:
        pytest.skip("every evidence file was re-made since the snapshot")
    now = {v["claim"]: v for v in _verdicts(remade) if v["task"] not in stale}
    assert sorted(now) == sorted(was), "the claims evaluated changed"
    differences = [d for name in was for d in _differences(was[name], now[name], name)]
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:40])


if __name__ == "__main__":
    SNAPSHOT.parent.mkdir(exist_ok=True)
    taken = {"evidence": _digests(), "verdicts": _verdicts()}
    SNAPSHOT.write_text(json.dumps(taken, indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT}")
