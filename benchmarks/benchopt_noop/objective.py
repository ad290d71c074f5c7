"""benchopt's side of the no-op comparison (issue 31): the same work as the harness probe's
``numbers`` x ``noop`` cells, one dataset configuration per cell, one solver run once."""

from benchopt import BaseObjective


class Objective(BaseObjective):
    name = "no-op"
    min_benchopt_version = "1.5"

    def set_data(self, value):
        self.value = value

    def get_objective(self):
        return dict(value=self.value)

    def evaluate_result(self, value):
        return dict(value=float(value))

    def get_one_result(self):
        return dict(value=0.0)
