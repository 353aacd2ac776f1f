"""Lint and audit with node pools: domains only in pools at zero, minDomains no pool can
satisfy, pools that cannot hold the spread through a zone's loss (issue 21 item 4)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from topospread.engine.audit import lint
from topospread.io import load_cluster
from topospread.io.manifests import read_lint_objects
from topospread.io.pools import load_node_pools
from topospread.model.objects import Deployment

DATA = Path(__file__).resolve().parents[2] / "data" / "autoscaling"


def _findings(*, replicas: int = 12, min_domains: int = 3, pools: bool = True) -> dict[str, str]:
    cluster, _ = load_cluster([DATA / "cluster.yaml"])
    node_pools = load_node_pools([DATA / "pools.yaml"]) if pools else ()
    items = read_lint_objects([str(DATA / "deployment.yaml")]).items
    (item,) = items
    deployment = item.obj
    assert isinstance(deployment, Deployment)
    template = deployment.template
    assert template is not None
    constraint = replace(template.topology_spread_constraints[0], min_domains=min_domains)
    changed = replace(
        deployment,
        replicas=replicas,
        template=replace(template, topology_spread_constraints=(constraint,)),
    )
    report = lint([replace(item, obj=changed)], cluster=cluster, pools=node_pools)
    return {f.rule: f.message for f in report.findings}


def test_a_zone_that_exists_only_in_a_pool_at_zero_is_named_in_the_seeds_words() -> None:
    message = _findings()["domains-only-in-pools-at-zero"]
    assert "zone-c (pool zone-c)" in message
    assert "won't be considered until there is at least one node in them" in message
    assert "only 2 domain(s) count for minDomains 3" in message


def test_without_pools_there_is_nothing_to_say_about_them() -> None:
    found = _findings(pools=False)
    assert not {"domains-only-in-pools-at-zero", "pools-cannot-survive-zone-loss"} & set(found)


def test_min_domains_beyond_every_pool_is_an_error() -> None:
    found = _findings(min_domains=4)
    assert "min-domains-unreachable" in found
    assert (
        "offer only 3 eligible zone domain(s) (zone-a, zone-b, zone-c)"
        in found["min-domains-unreachable"]
    )
    assert "min-domains-unreachable" not in _findings(min_domains=3)


def test_pools_too_small_for_the_loss_of_a_zone_are_reported_and_enough_is_quiet() -> None:
    # 4 pods of 1 CPU per 4-CPU node; zone-b's pool is full at 1 node: losing zone-a
    # leaves zone-b (4 pods) and zone-c (12), which hold 4 + 5 within maxSkew 1.
    found = _findings(replicas=12)
    assert "hold at most 9 of the 12 replicas" in found["pools-cannot-survive-zone-loss"]
    assert "pools-cannot-survive-zone-loss" not in _findings(replicas=9)
