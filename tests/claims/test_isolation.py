"""A claim's code cannot take the harness down (issue 58, item 8): ``os._exit``,
``sys.exit``, a fork whose child goes on, ``os.chdir``, a hang or megabytes of output in a
statistic, a control or a claim's construction give that claim ``error``; every other
verdict, the report and the exit code stand; SIGTERM while claims are evaluated marks the
parent run KILLED.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.claims import (
    Cells,
    Claim,
    Greater,
    Mean,
    Source,
    Statistic,
    Status,
    UseMetric,
    evaluate_claims,
)
from harness.claims.isolation import call_isolated
from harness.claims.stats import one_sample

HARNESS = str(Path(sys.executable).with_name("harness"))


def _exit_now() -> None:
    os._exit(0)


def _sys_exit() -> None:
    sys.exit(0)


def _fork() -> None:
    os.fork()  # both processes go on, the child as a second copy of the claim


def _chdir() -> None:
    os.chdir("/")


def _hang() -> None:
    time.sleep(600)


def _talk() -> None:
    sys.stdout.write("x" * 5_000_000)
    sys.stdout.flush()


FAULTS = {
    "os._exit": _exit_now,
    "sys.exit": _sys_exit,
    "fork": _fork,
    "chdir": _chdir,
    "hang": _hang,
    "output": _talk,
}


def _table(seeds: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"task": "t", "dataset": "d", "method": "new", "seed": range(seeds),
                         "status": "ok", "score": 1 + rng.normal(0, 0.1, seeds),
                         "run_id": [f"r{s}" for s in range(seeds)]})  # fmt: skip


class Sound(Claim):
    """'new' scores above 0.

    Source: test fixture.
    """

    name = "sound"
    task = "t"
    source = Source("fixture")
    statement = "new scores above 0."
    requires = (Cells("d", ("new",)),)
    hypothesis = Greater(0.0)
    control_description = "scores negated"

    def statistic(self, results):
        return one_sample(results["score"])

    def control(self, results):
        return results.assign(score=-results["score"])


class AlsoSound(Sound):
    """'new' scores above 0 (again).

    Source: test fixture.
    """

    name = "also-sound"


def _rogue(fault: str, place: str) -> type[Claim]:
    do = FAULTS[fault]

    class Rogue(Sound):
        name = f"rogue-{fault.replace('.', '-').replace('_', '')}-{place}"

        def __init__(self, params=None):
            if place == "init":
                do()
            super().__init__(params)

        def statistic(self, results):
            if place == "statistic":
                do()
            return super().statistic(results)

        def control(self, results):
            if place == "control":
                do()
            return super().control(results)

    return Rogue


@pytest.mark.parametrize("place", ["statistic", "control", "init"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_faulty_claim_is_an_error_and_the_others_stand(fault, place):
    rogue = _rogue(fault, place)
    before = os.getcwd()
    ended = time.monotonic()
    first, bad, last = evaluate_claims([Sound, rogue, AlsoSound], _table(), timeout=1.0)
    assert time.monotonic() - ended < 10
    assert os.getcwd() == before and os.getpid() == _PID  # still this process, here
    assert first.status == last.status == Status.REPRODUCED
    assert bad.status == Status.ERROR, (bad.status, bad.reason)
    expected = {
        "os._exit": "ended its process",
        "sys.exit": "SystemExit",
        "fork": "forked",
        "chdir": "working directory",
        "hang": "longer than 1 s",
        "output": "output",
    }[fault]
    assert expected in bad.reason, bad.reason


_PID = os.getpid()


def test_a_forked_copy_of_the_claim_never_reports_a_verdict():
    def forks_then_answers():
        pid = os.fork()
        return "copy" if pid == 0 else "original"

    outcome = call_isolated(forks_then_answers, timeout=5.0)
    assert not outcome.ok and "forked" in outcome.error


def test_quiet_code_that_reaps_its_own_process_is_fine():
    def runs_a_process():
        return subprocess.run(["true"], check=True).returncode

    outcome = call_isolated(runs_a_process, timeout=5.0)
    assert outcome.ok and outcome.value == 0, outcome.error


# -- the commands, as subprocesses on a tiny suite ------------------------------------------

PLUGIN = '''
import os, sys, time
from dataclasses import dataclass

import numpy as np
from harness import Cells, Claim, Dataset, Greater, Method, Metric, Source, hookimpl
from harness.claims import Mean, UseMetric


class Points(Dataset):
    """Nothing.

    Source: test fixture.
    """

    name = "points"
    task = "rogue"

    def load(self, params, seed):
        return seed


class Level(Method):
    """One plus seeded noise.

    Source: test fixture.
    """

    name = "level"
    task = "rogue"

    def run(self, data, params, seed) -> float:
        return 1.0 + float(np.random.default_rng(seed).normal(0, 0.1))


class Value(Metric):
    """The output.

    Source: test fixture.
    """

    name = "value"
    task = "rogue"

    def compute(self, data, output) -> float:
        return output


class Below(Metric):
    """The output, negated.

    Source: test fixture.
    """

    name = "below"
    task = "rogue"

    def compute(self, data, output) -> float:
        return -output


class Holds(Claim):
    """level scores above 0.

    Source: test fixture.
    """

    name = "holds"
    task = "rogue"
    source = Source("fixture")
    statement = "level scores above 0."
    requires = (Cells("points", ("level",)),)
    metric = "value"
    kind = Mean()
    hypothesis = Greater(0.0)
    subject = "level"
    control = UseMetric("below")


def _mark():
    marker = os.environ.get("ROGUE_MARKER")
    if marker:
        open(marker, "w").close()


FAULTS = {
    "exits": lambda: os._exit(0),
    "sys-exits": lambda: sys.exit(0),
    "forks": os.fork,
    "moves": lambda: os.chdir("/"),
    "hangs": lambda: (_mark(), time.sleep(600)),
    "talks": lambda: print("x" * 5_000_000),
}


def _rogue(fault, place):
    do = FAULTS[fault]

    class Rogue(Holds):
        name = f"{fault}-in-{place}"

        def __init__(self, params=None):
            if place == "init":
                do()
            super().__init__(params)

    if place == "control":
        Rogue.control = UseMetric("below")
        Rogue.kind = Mean()
        from harness.claims import Transform

        def transformed(rows, metric):
            do()
            return rows.assign(**{metric: -rows[metric]})

        Rogue.control = Transform(transformed, "negated")
    elif place == "statistic":
        from harness.claims import Statistic, TSample

        def statistic(rows, metric, unit, subject):
            do()
            return TSample.of(rows[metric].astype(float).to_numpy())

        Rogue.kind = Statistic(statistic, "mean value")
    return Rogue


ROGUES = [_rogue(*pair.split(":")) for pair in os.environ.get("ROGUE_FAULTS", "").split(",")
          if pair]  # fault:place, ...


@hookimpl
def harness_claims():
    return [Holds, *ROGUES]


@hookimpl
def harness_datasets():
    return [Points]


@hookimpl
def harness_methods():
    return [Level]


@hookimpl
def harness_metrics():
    return [Value, Below]
'''

SUITE = """
name: rogue
seeds: [0, 1, 2, 3]
runs:
  - task: rogue
    datasets: [points]
    methods: [level]
    metrics: [value, below]
"""


@pytest.fixture
def rogue_env(tmp_path):
    from importlib.metadata import entry_points

    from fake_plugins import install_fake_plugin

    install_fake_plugin(tmp_path / "site", "rogue", "rogue_plugin", PLUGIN)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path / "site"),
                                                      env.get("PYTHONPATH")]))  # fmt: skip
    others = {ep.name for ep in entry_points(group="harness")} - {"rogue"}
    env["HARNESS_DISABLE_PLUGINS"] = ",".join(sorted(others))
    env.pop("MLFLOW_TRACKING_URI", None)
    (tmp_path / "suite.yaml").write_text(SUITE)
    return env


def _harness(env, *args, cwd):
    return subprocess.run([HARNESS, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def _statuses(verdicts: list[dict]) -> dict[str, str]:
    return {v["claim"]: v["status"] for v in verdicts}


def test_faulty_claims_are_errors_and_the_run_its_report_and_exit_code_stand(
    rogue_env, tmp_path, store
):
    # each fault in each place is evaluate_claims's test above; here one place each
    rogue_env["ROGUE_FAULTS"] = ("exits:statistic,sys-exits:control,forks:init,moves:control,"
                                 "hangs:statistic,talks:init")  # fmt: skip
    path = str(tmp_path / "suite.yaml")
    ran = _harness(rogue_env, "run", path, "-j", "0", "--tracking-uri", store, "--strict-claims",
                   "--claim-timeout", "1", cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 3, ran.stdout[-3000:] + ran.stderr[-3000:]  # error: --strict fails
    report = tmp_path / "reports" / "rogue"
    verdicts = _statuses(json.loads((report / "claims.json").read_text()))
    assert verdicts.pop("holds") == "reproduced"
    assert len(verdicts) == 6 and set(verdicts.values()) == {"error"}, verdicts
    assert (report / "report.html").is_file()
    tail = " ".join(ran.stdout.split())
    assert "4 ok, 0 skipped, 0 failed" in tail and "1 reproduced, 6 error" in tail

    again = _harness(rogue_env, "claims", path, "--tracking-uri", store, "--format", "json",
                     "--claim-timeout", "1", cwd=tmp_path)  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    assert _statuses(json.loads(again.stdout)) == {**verdicts, "holds": "reproduced"}


def test_a_bad_claim_timeout_is_refused_before_any_cell_runs(rogue_env, tmp_path, store):
    rogue_env["HARNESS_CLAIM_TIMEOUT"] = "soon"
    path = str(tmp_path / "suite.yaml")
    ran = _harness(rogue_env, "run", path, "--tracking-uri", store, cwd=tmp_path)
    assert ran.returncode == 2 and "HARNESS_CLAIM_TIMEOUT" in ran.stderr, ran.stderr
    assert "--claim-timeout SECONDS" in ran.stderr and "cells" not in ran.stdout
    zero = _harness(rogue_env, "claims", path, "--claim-timeout", "0", cwd=tmp_path)
    assert zero.returncode == 2 and "--claim-timeout" in zero.stderr
    helped = _harness(rogue_env, "claims", "--help", cwd=tmp_path)
    assert "HARNESS_CLAIM_TIMEOUT" in helped.stdout


def test_sigterm_while_claims_are_evaluated_marks_the_parent_run_killed(rogue_env, tmp_path, store):
    import mlflow

    marker = tmp_path / "evaluating"
    rogue_env |= {"ROGUE_FAULTS": "hangs:statistic", "ROGUE_MARKER": str(marker)}
    path = str(tmp_path / "suite.yaml")
    process = subprocess.Popen([HARNESS, "run", path, "-j", "0", "--tracking-uri", store],
                               env=rogue_env, cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), process.communicate(timeout=5)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, err[-2000:]
    assert "Terminated (SIGTERM)" in err
    client = mlflow.MlflowClient(store)
    experiment = client.get_experiment_by_name("rogue")
    parents = client.search_runs([experiment.experiment_id], "tags.`harness.kind` = 'suite'")
    assert [p.info.status for p in parents] == ["KILLED"]


# -- one claim's code cannot move another's verdict --------------------------------------------


def _patches_the_core(rows, metric, unit, subject):
    """A custom statistic that monkeypatches a kind: every later Mean reads 10."""
    from harness.claims import kinds
    from harness.claims.samples import TSample

    kinds.Mean.sample = lambda self, *args: TSample.of([9.9, 10.0, 10.1, 10.05])
    return TSample.of(rows[metric].to_numpy(float))


class Patcher(Claim):
    """'new' scores above 0, by a statistic that patches the core.

    Source: test fixture.
    """

    name = "patcher"
    task = "t"
    source = Source("fixture")
    statement = "new scores above 0."
    requires = (Cells("d", ("new",)),)
    metric = "score"
    subject = "new"
    kind = Statistic(_patches_the_core, "a statistic that patches Mean")
    hypothesis = Greater(0.0)
    control = UseMetric("zero")


class Honest(Claim):
    """'new' scores above 2 (it does not: about 1).

    Source: test fixture.
    """

    name = "honest"
    task = "t"
    source = Source("fixture")
    statement = "new scores above 2."
    requires = (Cells("d", ("new",)),)
    metric = "score"
    subject = "new"
    kind = Mean()
    hypothesis = Greater(2.0)
    control = UseMetric("zero")


def test_a_claim_that_patches_the_core_moves_no_later_claims_verdict():
    """Both claims are of one family (this module's), the patcher evaluated first. With one
    child serving the family's claims (as before), the honest claim read the patched Mean
    (10 > 2) and came out uninformative instead of not-reproduced."""
    table = _table().assign(zero=0.0)
    alone = evaluate_claims([Honest], table, timeout=10.0)[0]
    patched, honest = evaluate_claims([Patcher, Honest], table, timeout=10.0)
    assert Patcher.family_name() == Honest.family_name()
    assert alone.status == Status.NOT_REPRODUCED, alone.reason
    assert honest.status == alone.status and honest.estimate == alone.estimate
    assert patched.status == Status.REPRODUCED


def test_only_declarations_made_of_the_cores_parts_share_a_child():
    """What may share a forked child with the next claim: the core's kinds, hypotheses and
    controls with plain values, nothing of the claim's own that could run."""
    from dataclasses import dataclass

    from harness.claims.contract import core_only

    class Odd(str):
        def __eq__(self, other):  # plugin code the core's matching would run
            return True

        __hash__ = str.__hash__

    @dataclass(frozen=True)
    class MyMean(Mean):
        pass

    class WithMethod(Honest):
        def helper(self):
            return 0

    class OddParam(Honest):
        requires = (Cells("d", ("new",), method_params={"k": Odd("x")}),)

    class OwnKind(Honest):
        kind = MyMean()

    class Mixin:
        def __setattr__(self, name, value):
            object.__setattr__(self, name, value)

    class AfterClaim(Honest, Mixin):
        pass

    assert core_only(Honest)
    for cls in (Patcher, Sound, WithMethod, OddParam, OwnKind, AfterClaim):
        assert not core_only(cls), cls.__name__
