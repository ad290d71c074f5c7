"""Public API of the ``lsmooth-gd`` task for method authors.

A method receives a :class:`Problem` and returns a :class:`Trajectory`::

    from harness import Method
    from harness_lsmooth_gd.api import Problem, Trajectory, descend


    class LAtTwiceTheGradient(Method):
        \"\"\"GD with 1 / l(2 ||g||), the integrand's largest value. Source: an example.\"\"\"

        name, task = "gd-l-at-2g", "lsmooth-gd"

        def run(self, data: Problem, params: Method.Params, seed: int) -> Trajectory:
            return descend(data, lambda g: 1.0 / float(data.ell(2.0 * g)), 1000)

Shapes (d the dimension, T the iterations):

* ``Problem.objective``: ``value(x)`` (+inf outside the domain), ``grad(x)`` (d,),
  ``hess_norm(x)``, ``minimiser()`` (d,); ``Problem.ell``: :class:`Ell`, with ``ell(s)``
  and ``ell.step(g)`` (the paper's step); ``x0`` (d,), ``f_star``, ``sublevel``
  (``grad_bound``, ``curvature``), ``l0``, ``l1``.
* ``Trajectory(values (T+1,), grad_norms (T+1,), evals (T+1,) strictly increasing, steps (T,),
  stopped_at)``, finite.
* ``descend(problem, step, steps)``: x_{k+1} = x_k - step(||g_k||) g_k, stopping at the
  domain's wall or an overflow.
"""

from harness_lsmooth_gd.data import Problem, Trajectory
from harness_lsmooth_gd.ell import Ell
from harness_lsmooth_gd.methods import descend
from harness_lsmooth_gd.objectives import Objective, Sublevel

__all__ = ["Ell", "Objective", "Problem", "Sublevel", "Trajectory", "descend"]
