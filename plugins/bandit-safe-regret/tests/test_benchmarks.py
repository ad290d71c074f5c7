"""Speed targets (issue 5): run with --benchmark-enable; with benchmarks disabled each runs once.

Targets: phased aggression, T = 1e5 rounds of rock-paper-scissors: <= 2 s;
Kuhn poker, T = 1e4: <= 5 s.
"""

from harness_bandit_safe_regret.datasets import KuhnPoker, RockPaperScissors
from harness_bandit_safe_regret.methods import PhasedAggressionBandit


def test_phased_aggression_rps_1e5_rounds(benchmark):
    data = RockPaperScissors().load(RockPaperScissors.Params(T=100_000), 0)
    method = PhasedAggressionBandit()
    out = benchmark.pedantic(method.run, args=(data, method.Params(), 0), rounds=3, iterations=1)
    assert out.T == 100_000


def test_phased_aggression_kuhn_1e4_rounds(benchmark):
    data = KuhnPoker().load(KuhnPoker.Params(T=10_000), 0)
    method = PhasedAggressionBandit()
    out = benchmark.pedantic(method.run, args=(data, method.Params(), 0), rounds=3, iterations=1)
    assert out.T == 10_000
