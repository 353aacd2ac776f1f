"""``topospread rebalance``: evictions that bring spread back within maxSkew, planned by
simulation (pure; the live execution is :mod:`topospread.cli.rebalance_apply`)."""

from topospread.engine.rebalance.plan import (
    ANNOTATION_MIRROR,
    Eviction,
    RebalanceOptions,
    RebalancePlan,
    SkewChange,
    minimum_moves,
    plan_rebalance,
)

__all__ = [
    "ANNOTATION_MIRROR",
    "Eviction",
    "RebalanceOptions",
    "RebalancePlan",
    "SkewChange",
    "minimum_moves",
    "plan_rebalance",
]
