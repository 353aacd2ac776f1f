"""Pod requests and node resources as the scheduler counts them.

Cases follow k8s.io/component-helpers resource/helpers_test.go (v0.37.1:
TestPodResourceRequests, TestPodLevelResourceRequests) and the scheduler's
framework/types_test.go (CalculateResource, non-zero defaults).
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from topospread.model.objects import Container, Node, ObjectMeta, Pod
from topospread.model.quantity import parse_quantity
from topospread.model.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Resource,
    is_extended_resource_name,
    is_scalar_resource_name,
    node_allocatable,
    pod_request_amounts,
    pod_requests,
    pod_resource,
    requests_signature,
    sum_pod_resources,
)

MI = 1024 * 1024


def rl(values: Mapping[str, str]) -> dict[str, object]:
    return {name: parse_quantity(text) for name, text in values.items()}


def c(sidecar: bool = False, **requests: str) -> Container:
    return Container(
        requests=rl({k.replace("_", "-"): v for k, v in requests.items()}),  # type: ignore[arg-type]
        restart_policy="Always" if sidecar else None,
    )


def pod(
    containers: tuple[Container, ...] = (),
    init: tuple[Container, ...] = (),
    overhead: Mapping[str, str] | None = None,
    pod_level: Mapping[str, str] | None = None,
) -> Pod:
    return Pod(
        ObjectMeta("p", "default"),
        containers=containers,
        init_containers=init,
        overhead=rl(overhead or {}),  # type: ignore[arg-type]
        pod_resources_requests=rl(pod_level) if pod_level is not None else None,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("the_pod", "milli_cpu"),
    [
        pytest.param(pod((c(cpu="1"), c(cpu="2"))), 3000, id="containers are summed"),
        pytest.param(
            pod((c(cpu="2"),), init=(c(cpu="4"),)),
            4000,
            id="a larger init container sets the request",
        ),
        pytest.param(
            pod((c(cpu="1"),), init=(c(sidecar=True, cpu="1"),)),
            2000,
            id="a restartable init container adds to the containers",
        ),
        pytest.param(
            pod(
                (c(cpu="1"),),
                init=(
                    c(cpu="5"),
                    c(sidecar=True, cpu="1"),
                    c(sidecar=True, cpu="2"),
                    c(sidecar=True, cpu="3"),
                ),
            ),
            7000,
            id="multiple restartable init containers",
        ),
        pytest.param(
            pod(
                (c(cpu="1"),),
                init=(
                    c(cpu="5"),
                    c(sidecar=True, cpu="1"),
                    c(sidecar=True, cpu="2"),
                    c(cpu="5"),
                    c(sidecar=True, cpu="3"),
                ),
            ),
            8000,
            id="an init container runs beside the sidecars started before it",
        ),
        pytest.param(
            pod((c(cpu="100"),), init=(c(sidecar=True, cpu="10"), c(cpu="200"))),
            210000,
            id="restartable init then init then regular",
        ),
        pytest.param(
            pod((c(cpu="1"),), overhead={"cpu": "500m"}),
            1500,
            id="overhead is added",
        ),
        pytest.param(
            pod((c(cpu="0.1m"), c(cpu="0.1m"))),
            1,
            id="amounts are summed exactly before rounding up",
        ),
        pytest.param(
            pod((c(cpu="2"),), pod_level={"cpu": "3"}, overhead={"cpu": "1"}),
            4000,
            id="pod-level requests replace the aggregate and overhead still adds",
        ),
    ],
)
def test_pod_requests_cpu(the_pod: Pod, milli_cpu: int) -> None:
    assert pod_requests(the_pod).milli_cpu == milli_cpu


@pytest.mark.parametrize(
    ("pod_level", "gate", "want"),
    [
        pytest.param(
            {"memory": "2Mi"},
            False,
            {"cpu": "2m"},
            id="pod-level memory is skipped with the gate off",
        ),
        pytest.param(
            {"memory": "2Mi"},
            True,
            {"memory": "2Mi", "cpu": "2m"},
            id="pod-level memory joins container cpu",
        ),
        pytest.param(
            {"storage": "2Mi"},
            True,
            {"cpu": "2m"},
            id="unsupported pod-level resources are ignored",
        ),
        pytest.param(
            {"hugepages-2Mi": "4Mi"},
            True,
            {"cpu": "2m", "hugepages-2Mi": "4Mi"},
            id="pod-level hugepages are supported",
        ),
    ],
)
def test_pod_level_requests(pod_level: dict[str, str], gate: bool, want: dict[str, str]) -> None:
    the_pod = pod((c(cpu="2m"),), pod_level=pod_level)
    got = pod_request_amounts(the_pod, pod_level_resources=gate)
    assert got == {name: q.amount for name, q in rl(want).items()}  # type: ignore[attr-defined]


def test_pod_requests_cover_every_kind_of_resource() -> None:
    the_pod = pod(
        (
            c(cpu="1500m", memory="1Gi", ephemeral_storage="1e3", **{"example.com/gpu": "2"}),
            c(**{"hugepages-2Mi": "4Mi", "foo": "5", "pods": "3"}),
        )
    )
    assert pod_requests(the_pod) == Resource(
        milli_cpu=1500,
        memory=1024 * MI,
        ephemeral_storage=1000,
        scalar_resources={"example.com/gpu": 2, "hugepages-2Mi": 4 * MI},
    )


@pytest.mark.parametrize(
    ("the_pod", "non0_cpu", "non0_mem"),
    [
        pytest.param(
            pod((c(),)),
            DEFAULT_MILLI_CPU_REQUEST,
            DEFAULT_MEMORY_REQUEST,
            id="a container without requests counts as 100m and 200Mi",
        ),
        pytest.param(pod((c(), c())), 200, 400 * MI, id="the defaults apply per container"),
        pytest.param(pod((c(cpu="0", memory="0"),)), 0, 0, id="explicit zero requests stay zero"),
        pytest.param(
            pod((c(cpu="1"),)),
            1000,
            DEFAULT_MEMORY_REQUEST,
            id="only the missing resource is defaulted",
        ),
        pytest.param(
            pod((c(),), init=(c(cpu="1"),)),
            1000,
            DEFAULT_MEMORY_REQUEST,
            id="init containers are defaulted too",
        ),
        pytest.param(
            pod((c(),), pod_level={"cpu": "2"}),
            2000,
            DEFAULT_MEMORY_REQUEST,
            id="with pod-level requests only resources missing at both levels are defaulted",
        ),
    ],
)
def test_non_zero_requests(the_pod: Pod, non0_cpu: int, non0_mem: int) -> None:
    res = pod_resource(the_pod)
    assert (res.non0_cpu, res.non0_mem) == (non0_cpu, non0_mem)


def test_pod_resource_counts_zero_requests_as_zero() -> None:
    assert pod_resource(pod((c(),))).resource == Resource()


def test_sum_pod_resources_adds_requested_and_non_zero() -> None:
    pods = [pod((c(cpu="1", memory="1Gi"),)), pod((c(),))]
    requested, non_zero = sum_pod_resources(pods)
    assert requested == Resource(milli_cpu=1000, memory=1024 * MI)
    assert non_zero == Resource(milli_cpu=1100, memory=1224 * MI)


def test_resource_arithmetic_keeps_scalar_keys() -> None:
    a = Resource(1, 2, 3, 4, {"x/y": 5})
    b = Resource(1, 1, 1, 1, {"x/y": 5, "z/w": 1})
    assert a + b == Resource(2, 3, 4, 5, {"x/y": 10, "z/w": 1})
    assert (a + b) - b == Resource(1, 2, 3, 4, {"x/y": 5, "z/w": 0})


def test_node_allocatable_reads_pods_count() -> None:
    node = Node(
        ObjectMeta("n"),
        allocatable=rl({"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "1"}),  # type: ignore[arg-type]
    )
    assert node_allocatable(node) == Resource(4000, 8192 * MI, 0, 110, {"example.com/gpu": 1})


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        pytest.param("example.com/gpu", True, True, id="a domain-prefixed name is extended"),
        pytest.param("cpu", False, False, id="cpu is native"),
        pytest.param(
            "kubernetes.io/foo", False, True, id="a kubernetes.io name is native but scalar"
        ),
        pytest.param("hugepages-1Gi", False, True, id="hugepages are scalar"),
        pytest.param("attachable-volumes-aws-ebs", False, True, id="attachable volumes are scalar"),
        pytest.param(
            "requests.example.com/x", False, False, id="a requests. prefix is not extended"
        ),
        pytest.param("Example.com/gpu", False, False, id="an invalid prefix is not extended"),
    ],
)
def test_resource_name_kinds(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


def _replica(
    cpu: str = "100m", sidecar: bool = False, overhead: str = "", pod_level: str = ""
) -> Pod:
    """One replica of a template: an app container and an init container (or sidecar)."""
    return pod(
        (c(cpu=cpu, memory="64Mi"),),
        (c(sidecar=sidecar, cpu="50m"),),
        overhead={"cpu": overhead} if overhead else None,
        pod_level={"cpu": pod_level} if pod_level else None,
    )


def test_replicas_of_one_template_share_a_requests_signature() -> None:
    assert requests_signature(_replica()) == requests_signature(_replica())


@pytest.mark.parametrize(
    ("changed", "milli_cpu"),
    [
        ({}, 100),
        ({"cpu": "200m"}, 200),
        ({"sidecar": True}, 150),
        ({"overhead": "10m"}, 110),
        ({"pod_level": "2"}, 2000),
    ],
)
def test_what_replicas_share_is_what_each_would_compute(changed: dict, milli_cpu: int) -> None:
    # Warm the memo with the plain template, then ask for each variant twice.
    pod_resource(_replica())
    pod_requests(_replica())
    first, second = _replica(**changed), _replica(**changed)
    assert (requests_signature(first) == requests_signature(_replica())) == (not changed)
    assert pod_resource(first).resource.milli_cpu == milli_cpu
    assert pod_requests(second).milli_cpu == milli_cpu
    assert pod_resource(second) is pod_resource(first)
