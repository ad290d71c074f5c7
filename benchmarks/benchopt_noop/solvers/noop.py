"""Returns the data, as the harness probe's ``noop`` method does."""

from benchopt import BaseSolver


class Solver(BaseSolver):
    name = "noop"
    sampling_strategy = "run_once"

    def set_objective(self, value):
        self.value = value

    def run(self, _):
        self.result = self.value

    def get_result(self):
        return dict(value=self.result)
