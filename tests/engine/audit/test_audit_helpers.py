"""The small parsers and the arithmetic behind the domain rules."""

from __future__ import annotations

import pytest

from topospread.engine.audit import (
    RULES,
    ignored_in_text,
    parse_domains,
    parse_label_selector,
    parse_workload_name,
    spread_feasible,
)
from topospread.errors import InputError


def test_a_kubectl_label_selector_selects_as_kubectl_does() -> None:
    selector = parse_label_selector("app=web,tier!=cache,env in (prod, staging),!legacy,team")
    assert selector.matches({"app": "web", "env": "prod", "team": "a"})
    assert not selector.matches({"app": "web", "env": "dev", "team": "a"})
    assert not selector.matches({"app": "web", "env": "prod", "team": "a", "legacy": "1"})
    assert not selector.matches({"app": "web", "env": "prod", "team": "a", "tier": "cache"})


def test_an_unparsable_selector_is_bad_input() -> None:
    with pytest.raises(InputError, match="invalid label selector"):
        parse_label_selector("app in prod")


def test_a_workload_name_may_carry_kubectls_kind_names() -> None:
    assert parse_workload_name("deployment/web") == ("Deployment", "web")
    assert parse_workload_name("sts/db") == ("StatefulSet", "db")
    assert parse_workload_name("web") == (None, "web")
    with pytest.raises(InputError, match="unknown workload"):
        parse_workload_name("service/web")


def test_domains_accept_short_names_and_full_topology_keys() -> None:
    assert parse_domains("zone=3,hostname=12,example.com/rack=4") == {
        "topology.kubernetes.io/zone": 3,
        "kubernetes.io/hostname": 12,
        "example.com/rack": 4,
    }
    with pytest.raises(InputError, match="KEY=N"):
        parse_domains("zone=three")


def test_a_topology_key_given_twice_in_domains_is_refused_under_either_name() -> None:
    with pytest.raises(InputError, match=r"topology\.kubernetes\.io/zone is given twice"):
        parse_domains("zone=3,topology.kubernetes.io/zone=4")


def test_ignore_comments_name_rules_or_all() -> None:
    text = "# topospread:ignore ghost-selector, skew-over-max\nkind: Deployment\n"
    assert ignored_in_text(text, RULES) == {"ghost-selector", "skew-over-max"}
    assert ignored_in_text("#topospread:ignore all\n", RULES) == set(RULES)
    assert ignored_in_text("kind: Deployment # nothing to ignore\n", RULES) == frozenset()


@pytest.mark.parametrize(
    ("replicas", "zones", "feasible"),
    [
        (8, [2, 1, 1], False),  # even zones need 3 pods on one node, 1-2 on the others
        (8, [2, 2, 2], True),
        (6, [2, 1, 1], True),  # 2/2/2 by zone, 1/1 on zone-a's nodes
        (4, [5, 1], False),  # zones 2/2 put 2 pods on the lone node and none on three others
        (3, [5, 1], True),  # zones 2/1: every node holds 0 or 1
        (1, [5, 1], True),
        (100, [4, 4, 4], True),
    ],
)
def test_zone_and_hostname_spread_feasibility(
    replicas: int, zones: list[int], feasible: bool
) -> None:
    assert spread_feasible(replicas, zones, zone_skew=1, host_skew=1) is feasible
