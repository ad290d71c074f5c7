"""Claims of the ``ftrl-shocks`` plugin: one per result of the paper's abstract.

Only the abstract of arXiv 2506.13286 could be read (its body, theorem numbers, constants and
figures could not). Every claim names "abstract" as its source; its game, noise level,
horizon, statistic and margin are this plugin's reconstruction (not read in the paper).
Margins were fixed on a pilot of seeds 1000-1002 (200 paths each), seeds the suites never
run; the numbers are in each docstring.

The control of the hitting, return and drift claims is deterministic FTRL (sigma = 0, which
cycles in matching pennies) put in place of the shocked dynamics; their rival is the same
FTRL with mean-reverting (Ornstein-Uhlenbeck, rate 4) shocks of the same instantaneous level:
noise that is not a martingale. Seeds are the units: each seed's value is a mean over its
cell's 200 paths (and both players where the metric says so), tested against the claim's
per-seed threshold; the claim holds when more than half of the seeds pass (``SEEDS_SHARE``,
exact binomial). The margins (thresholds) were fixed from the pilot.
"""

from __future__ import annotations

from harness import Cells, Claim, Greater, Rival, Select, Source
from harness.claims import Rate, Swap

__all__ = [
    "CLAIMS",
    "ClosedSpanAttracts",
    "SettlesOnlyAtPureNash",
    "ShocksDriftToBoundary",
    "ShocksDriftToBoundaryRPS",
    "ShocksReachPureStrategies",
    "ShocksReturnToPureStrategies",
]

TASK = "ftrl-shocks"
#: Every claim is an exact (Clopper-Pearson) rate over seeds: the share of seeds passing the
#: claim's threshold must exceed one half. 8 of 8 decide it (lower bound 0.63, p = 0.0039,
#: below 0.05 after Holm over 6 claims); 0 of 8 decide against (upper bound 0.37).
SEEDS_SHARE = 0.5
PAPER = "Cauvin, Legacci, Mertikopoulos, ICML 2025"
ARXIV = "2506.13286"
FTRL = "stochastic-ftrl"
ZERO_SUM = {"horizon": 30.0, "regularizer": "entropic"}
SHOCKED = Select(FTRL, method_params={"sigma": 1.0, "regularizer": "entropic"})
DETERMINISTIC = Select(FTRL, method_params={"sigma": 0.0, "regularizer": "entropic"})
NO_SHOCKS = Swap(
    source=DETERMINISTIC,
    target=SHOCKED,
    description="deterministic FTRL (sigma = 0) in the shocked dynamics' place",
)
MEAN_REVERTING = Rival(
    "mean-reverting-shocks",
    {"sigma": 1.0, "mean_reversion": 4.0},
    why="shocks of the same level that mean-revert (OU, rate 4): noise that is no martingale",
)


class _ShockedFTRLClaim(Claim):
    """What every claim here shares: the task, the abstract as source, seeds as units, a rate
    over seeds above one half, shocked entropic FTRL as the subject, mean-reverting shocks
    as the rival and deterministic FTRL as the control, unless a claim says otherwise."""

    task = TASK
    source = Source(PAPER, ARXIV, "Abstract (theorem not read)")
    unit = "seed"
    hypothesis = Greater(SEEDS_SHARE)
    subject = SHOCKED
    rivals = (MEAN_REVERTING,)  # shocks that are no martingale
    control = NO_SHOCKS  # deterministic FTRL in the shocked dynamics' place


class ShocksReachPureStrategies(_ShockedFTRLClaim):
    """Under shocks, each player comes eps-close to a pure strategy in finite time.

    Matching pennies from (3/4, 1/4) x (1/2, 1/2), where deterministic FTRL cycles on a closed
    orbit that never comes near a pure strategy. Statistic: per seed, the share of (path,
    player) pairs 0.01-close to a pure strategy by t = 30 (``hitting.rate``); hitting times
    are heavy-tailed, so a rate by a fixed horizon, never a mean time. Margin: pilot (seeds
    1000-1002) gave 0.988, 0.990, 0.990 (sigma = 1), 0 (sigma = 0), 0.085, 0.068, 0.107 (OU
    rate 4); the threshold 0.95 lies between. Shocks that persist over a cycle (OU rate 1,
    not in the suite) gave 0.868-0.922: they reach pure strategies too, later.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read); the
    paper's estimate of the time was not read.
    """

    name = "shocks-reach-pure-strategies"
    statement = (
        "In matching pennies with score shocks sigma = 1, more than 95% of players come within"
        " 0.01 of a pure strategy by t = 30, in more than half of the seeds of 200 paths"
        " (setting a reconstruction, not read in the paper)."
    )
    requires = (
        Cells("matching-pennies", (FTRL,), {}, {**ZERO_SUM, "sigma": [0.0, 1.0]}, min_seeds=8),
    )
    metric = "hitting.rate"
    kind = Rate(threshold=0.95, above=True)


class ShocksReturnToPureStrategies(_ShockedFTRLClaim):
    """Under shocks, play leaves a pure strategy's neighbourhood and comes back.

    Matching pennies as above. Statistic: per seed, the share of (path, player) pairs that
    enter a 0.01-neighbourhood of a pure strategy at least twice by t = 30, having fallen
    below probability 0.75 on every pure strategy in between (``returns.rate``). Margin:
    pilot gave 0.932, 0.963, 0.960 (sigma = 1), 0 (sigma = 0), 0.033, 0.030, 0.037 (OU
    rate 4), 0.682-0.748 (OU rate 1, not in the suite); threshold 0.8.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read): they
    "return arbitrarily close to some (possibly different) pure strategy infinitely often"; a
    finite horizon sees two visits at most.
    """

    name = "shocks-return-to-pure-strategies"
    statement = (
        "In matching pennies with score shocks sigma = 1, more than 80% of players visit a"
        " 0.01-neighbourhood of a pure strategy twice, leaving it in between, by t = 30, in"
        " more than half of the seeds (setting a reconstruction, not read in the paper)."
    )
    requires = ShocksReachPureStrategies.requires
    metric = "returns.rate"
    kind = Rate(threshold=0.8, above=True)


class ShocksDriftToBoundary(_ShockedFTRLClaim):
    """Where deterministic FTRL is recurrent, shocks drift play toward the boundary.

    Matching pennies as above (zero-sum, interior equilibrium, deterministic FTRL recurrent).
    Statistic: per seed, the change from t = 0 to t = 30 of the mean over paths of the
    smallest action probability (``boundary-distance.change``; 0.25 at the start).
    Margin: pilot gave -0.238, -0.240, -0.237 (sigma = 1), +0.011 (sigma = 0, a point on its
    closed orbit), -0.088, -0.081, -0.096 (OU rate 4); threshold -0.15. At OU rate 1 (shocks
    that persist over a cycle, not in the suite) the pilot gave -0.198 to -0.205: such shocks
    drift too, slower.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read).
    Which functional the paper shows to drift was not read.
    """

    name = "shocks-drift-to-boundary"
    statement = (
        "In matching pennies with score shocks sigma = 1, the mean smallest action probability"
        " falls by more than 0.15 (from 0.25) by t = 30 in more than half of the seeds, while"
        " deterministic FTRL keeps it (setting a reconstruction, not read in the paper)."
    )
    requires = ShocksReachPureStrategies.requires
    metric = "boundary-distance.change"
    kind = Rate(threshold=-0.15, above=False)


class ShocksDriftToBoundaryRPS(_ShockedFTRLClaim):
    """In rock-paper-scissors too, shocks take play to the boundary where FTRL cycles inside.

    Rock-paper-scissors from (1/2, 1/4, 1/4) x uniform (zero-sum, interior equilibrium).
    Statistic: per seed, the mean over paths of the smallest action probability at t = 30
    (``boundary-distance.final``; 0.25 at the start). Margin: pilot gave 0.001, 0.002, 0.002
    (sigma = 1), 0.231 (sigma = 0), 0.109, 0.110, 0.109 (OU rate 4); threshold 0.05. The change
    from the start, the matching-pennies claim's statistic, would not separate the rival here
    (pilot -0.14 against a threshold of -0.15), so this claim reads the level reached.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read).
    Which functional the paper shows to drift was not read.
    """

    name = "shocks-drift-to-boundary-rps"
    statement = (
        "In rock-paper-scissors with score shocks sigma = 1, the mean smallest action"
        " probability is below 0.05 at t = 30 (0.25 at the start) in more than half of the"
        " seeds, while deterministic FTRL keeps it above 0.2 (setting a reconstruction, not"
        " read in the paper)."
    )
    requires = (
        Cells("rock-paper-scissors", (FTRL,), {}, {**ZERO_SUM, "sigma": [0.0, 1.0]}, min_seeds=8),
    )
    metric = "boundary-distance.final"
    kind = Rate(threshold=0.05, above=False)


class SettlesOnlyAtPureNash(_ShockedFTRLClaim):
    """Under shocks, play started at a mixed equilibrium leaves it and settles at pure ones.

    The 2x2 coordination game ``[[2, 0], [0, 1]]`` started at its mixed equilibrium (1/3,
    2/3), a rest point of deterministic FTRL. Statistic: per seed, the share of paths that
    stay 0.01-close to one pure Nash equilibrium over the last fifth of t in [0, 20]
    (``limit-set.nash``). Margin: pilot gave 0.970, 0.990, 0.985 (sigma = 1), 0 (sigma = 0);
    threshold 0.9. No rival: mean-reverting shocks (pilot 0.995-1.0) also push play off an
    unstable rest point, which is no part of the paper's mechanism to rule out.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "the only possible limits ... are pure Nash equilibria".
    """

    name = "shocks-settle-only-at-pure-nash"
    statement = (
        "In a 2x2 coordination game started at its mixed equilibrium, more than 90% of paths"
        " with score shocks sigma = 1 settle at a pure Nash equilibrium by t = 20 in more than"
        " half of the seeds, and none at the mixed one (setting a reconstruction, not read in"
        " the paper)."
    )
    requires = (
        Cells("coordination", (FTRL,), {}, {"horizon": 20.0, "sigma": [0.0, 1.0]}, min_seeds=8),
    )
    metric = "limit-set.nash"
    kind = Rate(threshold=0.9, above=True)
    rivals = ()  # mean-reverting shocks also leave the unstable mixed equilibrium


class ClosedSpanAttracts(_ShockedFTRLClaim):
    """A span closed under better replies keeps play under shocks; one that is not, loses it.

    The 3x3 ``club-game``: a matching-pennies block {0, 1} x {0, 1}, closed under better
    replies but holding no pure equilibrium, with 5% initial mass outside. Statistic: per
    seed, the mean over paths of the smaller player mass on the span at t = 20
    (``span-mass.final``). Margin: pilot 1.0, 1.0, 1.0 (closed), 0.823, 0.864, 0.868 (not
    closed, the control's game in the closed one's place) at sigma = 1; threshold 0.95. No
    rival: deterministic FTRL keeps a closed span too (pilot 1.0).

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read): "a
    span of pure strategies is stable and attracting if and only if it is closed under better
    replies".
    """

    name = "closed-span-attracts-under-shocks"
    statement = (
        "In a 3x3 game whose 2x2 span is closed under better replies, play with score shocks"
        " sigma = 1 keeps more than 95% of its mass on the span at t = 20 in more than half of"
        " the seeds, and not when the span is not closed (setting a reconstruction, not read"
        " in the paper)."
    )
    requires = (
        Cells("club-game", (FTRL,), {"closed": [True, False]}, {"horizon": 20.0, "sigma": 1.0},
              min_seeds=8),
    )  # fmt: skip
    metric = "span-mass.final"
    kind = Rate(threshold=0.95, above=True)
    subject = Select(FTRL, method_params={"sigma": 1.0}, dataset_params={"closed": True})
    rivals = ()  # see the docstring: deterministic FTRL keeps a closed span too
    control = Swap(
        source=Select(FTRL, method_params={"sigma": 1.0}, dataset_params={"closed": False}),
        target=Select(FTRL, method_params={"sigma": 1.0}, dataset_params={"closed": True}),
        description="the game whose span is not closed under better replies in its place",
    )


CLAIMS: tuple[type[Claim], ...] = (
    ShocksReachPureStrategies,
    ShocksReturnToPureStrategies,
    ShocksDriftToBoundary,
    ShocksDriftToBoundaryRPS,
    SettlesOnlyAtPureNash,
    ClosedSpanAttracts,
)
