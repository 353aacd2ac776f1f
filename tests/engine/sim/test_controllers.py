"""Controller behaviour after upstream: ActivePodsWithRanks, names, hashes, fenceposts."""

from __future__ import annotations

import random

import pytest

from topospread.engine.sim.controllers import (
    ALPHANUMS,
    ANNOTATION_POD_DELETION_COST,
    RankView,
    compute_hash,
    generate_name,
    pod_deletion_less,
    resolve_fenceposts,
    safe_encode_string,
    scaled_value,
)
from topospread.model.objects import Container, ObjectMeta, Pod

# TestSortingActivePodsWithRanks (pkg/controller/controller_utils_test.go, v1.37.1).
# Times are seconds before NOW; None is Go's zero time.
NOW = 10_000_000.0
MONTH = NOW - 30 * 86400
H2, H5, H8 = NOW - 2 * 3600, NOW - 5 * 3600, NOW - 8 * 3600


def pod(name, node, phase, ready, restarts=0, side=0, ready_since=None, created=None, cost=None):
    annotations = {ANNOTATION_POD_DELETION_COST: cost} if cost is not None else None
    return RankView(name, node, phase, ready, ready_since, created, restarts, side, annotations)


unscheduled = pod("unscheduled", "", "Pending", False)
scheduled_pending = pod("pending", "node", "Pending", False)
unknown_phase = pod("unknown-phase", "node", "Unknown", False)
running_not_ready = pod("not-ready", "node", "Running", False)
ready_no_transition = pod("ready-no-last-transition-time", "node", "Running", True)
ready_now = pod("ready-now", "node", "Running", True, ready_since=NOW, created=NOW)
ready_then = pod("ready-then", "node", "Running", True, ready_since=MONTH, created=MONTH)
ready_high_restarts = pod("ready-high-restarts", "node", "Running", True, 9001, 0, NOW, NOW)
ready_high_side = pod("ready-high-restarts", "node", "Running", True, 9001, 9001, NOW, NOW)
ready_now_created_then = pod("ready-now-created-then", "node", "Running", True, 0, 0, NOW, MONTH)
low_cost = pod("low-deletion-cost", "node", "Running", True, 0, 0, NOW, MONTH, "10")
high_cost = pod("high-deletion-cost", "node", "Running", True, 0, 0, NOW, MONTH, "100")
unscheduled_5h = pod("unscheduled-5-hours", "", "Pending", False, 0, 0, H5, H5)
unscheduled_8h = pod("unscheduled-10-hours", "", "Pending", False, 0, 0, H8, H8)
ready_2h = pod("ready-2-hours", "", "Running", True, 0, 0, H2, MONTH)
ready_5h = pod("ready-5-hours", "", "Running", True, 0, 0, H5, MONTH)
ready_10h = pod("ready-10-hours", "", "Running", True, 0, 0, H8, MONTH)


@pytest.mark.parametrize(
    ("p1", "p2"),
    [
        (unscheduled, unscheduled),
        (scheduled_pending, scheduled_pending),
        (unknown_phase, unknown_phase),
        (running_not_ready, running_not_ready),
        (ready_now_created_then, ready_now_created_then),
        (ready_now, ready_now),
        (ready_then, ready_then),
        (ready_high_restarts, ready_high_restarts),
        (unscheduled_5h, unscheduled_8h),
        (ready_5h, ready_10h),
    ],
    ids=lambda p: p.name,
)
def test_equal_pods_are_neither_less_nor_greater(p1, p2):
    assert not pod_deletion_less(p1, 1, p2, 1, NOW)
    assert not pod_deletion_less(p2, 1, p1, 1, NOW)


@pytest.mark.parametrize(
    ("lesser", "lesser_rank", "greater", "greater_rank", "cost_gate"),
    [
        (unscheduled, 1, scheduled_pending, 2, True),
        (unscheduled, 2, scheduled_pending, 1, True),
        (scheduled_pending, 1, unknown_phase, 2, True),
        (unknown_phase, 1, running_not_ready, 2, True),
        (running_not_ready, 1, ready_no_transition, 1, True),
        (ready_no_transition, 1, ready_now, 1, True),
        (ready_now, 2, ready_no_transition, 1, True),
        (ready_now, 1, ready_then, 1, True),
        (ready_now, 2, ready_then, 1, True),
        (ready_high_restarts, 1, ready_now, 1, True),
        (ready_high_side, 1, ready_high_restarts, 1, True),
        (ready_now, 2, ready_high_restarts, 1, True),
        (ready_now, 1, ready_now_created_then, 1, True),
        (ready_now_created_then, 2, ready_now, 1, True),
        (low_cost, 2, high_cost, 1, True),
        (high_cost, 2, low_cost, 1, False),
        (ready_2h, 1, ready_5h, 1, True),
    ],
)
def test_the_lesser_pod_is_deleted_first(lesser, lesser_rank, greater, greater_rank, cost_gate):
    kwargs = {"pod_deletion_cost": cost_gate}
    assert pod_deletion_less(lesser, lesser_rank, greater, greater_rank, NOW, **kwargs)
    assert not pod_deletion_less(greater, greater_rank, lesser, lesser_rank, NOW, **kwargs)


@pytest.mark.parametrize(
    ("cost", "expected_first"),
    [("-5", "a"), ("5", "b"), ("+5", None), ("007", None), ("0", None), ("99999999999", None)],
    ids=["negative", "positive", "plus-sign-is-0", "leading-zeros-is-0", "zero", "overflow-is-0"],
)
def test_pod_deletion_cost_is_parsed_as_upstream(cost, expected_first):
    # GetDeletionCostFromPodAnnotations: invalid values count as 0; lower cost goes first.
    a = pod("a", "n", "Running", True, 0, 0, NOW, NOW, cost)
    b = pod("b", "n", "Running", True, 0, 0, NOW, NOW, "0")
    assert pod_deletion_less(a, 1, b, 1, NOW) == (expected_first == "a")
    assert pod_deletion_less(b, 1, a, 1, NOW) == (expected_first == "b")


def test_generated_names_use_the_upstream_alphabet_and_are_seeded():
    names = [generate_name("web-5d8f9c7b4-", random.Random(7)) for _ in range(2)]
    assert names[0] == names[1]
    suffix = names[0].removeprefix("web-5d8f9c7b4-")
    assert len(suffix) == 5
    assert set(suffix) <= set(ALPHANUMS)
    assert generate_name("x" * 70, random.Random(1))[:58] == "x" * 58


def test_safe_encode_string_maps_bytes_onto_the_alphabet():
    # rand.SafeEncodeString: '0' is byte 48, 48 % 27 = 21 -> '4'.
    assert safe_encode_string("0") == "4"
    assert safe_encode_string("123") == ALPHANUMS[49 % 27] + ALPHANUMS[50 % 27] + ALPHANUMS[51 % 27]


def _template(image: str, **labels: str) -> Pod:
    return Pod(ObjectMeta("", "default", labels=labels), containers=(Container("c", image),))


def test_template_hash_is_deterministic_and_sensitive_to_the_template():
    a = compute_hash(_template("nginx:1", app="web", tier="fe"))
    assert a == compute_hash(_template("nginx:1", tier="fe", app="web"))  # label order
    assert a != compute_hash(_template("nginx:2", app="web", tier="fe"))
    assert a != compute_hash(_template("nginx:1", app="web", tier="fe"), 1)  # collisionCount
    assert set(a) <= set(ALPHANUMS)


@pytest.mark.parametrize(
    ("surge", "unavailable", "replicas", "expected"),
    [
        ("25%", "25%", 9, (3, 2)),  # surge rounds up, unavailable down
        ("25%", "25%", 10, (3, 2)),
        ("25%", "25%", 1, (1, 0)),
        (0, 0, 5, (0, 1)),  # both zero: unavailable becomes 1
        ("0%", "0%", 5, (0, 1)),
        (1, 0, 6, (1, 0)),
        ("50%", 2, 3, (2, 2)),
    ],
)
def test_resolve_fenceposts_rounds_as_upstream(surge, unavailable, replicas, expected):
    assert resolve_fenceposts(surge, unavailable, replicas) == expected


def test_scaled_value_rounding():
    assert scaled_value("33%", 10, round_up=True) == 4
    assert scaled_value("33%", 10, round_up=False) == 3
    assert scaled_value(7, 10, round_up=True) == 7
