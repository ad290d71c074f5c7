"""A probe plugin for the speed benchmarks (task 'probe'): cells that do nothing, sleep,
or burn CPU, so what is measured is the harness. No paper behind it."""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness import Dataset, Method, Metric, hookimpl


class Numbers(Dataset):
    """A number derived from the seed (stands in for data that is costly to load).

    Source: benchmark fixture.
    """

    name = "numbers"
    task = "probe"

    @dataclass
    class Params:
        size: int = 1

    def load(self, params: Params, seed: int) -> float:
        return float(seed % 97) * params.size


class Noop(Method):
    """Returns the data.

    Source: benchmark fixture.
    """

    name = "noop"
    task = "probe"

    @dataclass
    class Params:
        tag: int = 0

    def run(self, data: float, params: Params, seed: int) -> float:
        return data + params.tag


class Sleep(Method):
    """Sleeps ``ms`` milliseconds (no CPU).

    Source: benchmark fixture.
    """

    name = "sleep"
    task = "probe"

    @dataclass
    class Params:
        ms: float = 20.0

    def run(self, data: float, params: Params, seed: int) -> float:
        time.sleep(params.ms / 1000)
        return data


class Spin(Method):
    """Burns CPU in pure Python for ``seconds`` of process time (CPU-bound cells).

    Source: benchmark fixture.
    """

    name = "spin"
    task = "probe"

    @dataclass
    class Params:
        seconds: float = 0.25

    def run(self, data: float, params: Params, seed: int) -> float:
        end, total = time.process_time() + params.seconds, 0
        while time.process_time() < end:
            total += sum(range(1000))
        return data + (total > 0)


class Value(Metric):
    """The method's output.

    Source: benchmark fixture.
    """

    name = "value"
    task = "probe"

    def compute(self, data: float, output: float) -> float:
        return float(output)


@hookimpl
def harness_datasets():
    return [Numbers]


@hookimpl
def harness_methods():
    return [Noop, Sleep, Spin]


@hookimpl
def harness_metrics():
    return [Value]
