"""The scheduler's cycle, bind and failure handling on a FakeTransport (no server)."""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from topospread.client.source import (
    DEVICE_CLASSES,
    NODES,
    PODS,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
)
from topospread.client.transport import FakeTransport, Request, Response
from topospread.engine.loop.loop import Failure
from topospread.plugins.registry import registry
from topospread.scheduler.options import options_from_document
from topospread.scheduler.scheduler import Scheduler
from topospread.testing.dra import GPU_CLASS, claim, device, request, slice_
from topospread.testing.gang import GANG, gang_factory
from topospread.testing.live import node, pod
from topospread.testing.scheduling import wait_for


class Api:
    """Answers binds with a scripted status and records every write."""

    def __init__(self, bind_status: int = 201) -> None:
        self.bind_status = bind_status
        self.writes: list[Request] = []
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        with self.lock:
            self.writes.append(request)
        if request.path.endswith("/binding"):
            return Response(self.bind_status, b"{}")
        return Response(201, b"{}")

    def by_path(self, suffix: str) -> list[Request]:
        with self.lock:
            return [r for r in self.writes if r.path.endswith(suffix)]


class AnsweredLater:
    """A transport that sends writes without waiting (as the write processes do): each
    answer comes on the ``answers`` thread; records which thread sent each write."""

    sends_async = True

    def __init__(self, api: Api) -> None:
        self.fake = FakeTransport(api)
        self.senders: list[tuple[str, str]] = []
        self._answers: queue.Queue[tuple[Request, Callable[[Response], object]]] = queue.Queue()
        threading.Thread(target=self._answer, name="answers", daemon=True).start()

    @property
    def server(self) -> str:
        return self.fake.server

    def send(self, request: Request) -> Response:
        self.senders.append((request.path, threading.current_thread().name))
        return self.fake.send(request)

    def send_async(self, request: Request, done: Callable[[Response], object]) -> bool:
        self.senders.append((request.path, threading.current_thread().name))
        self._answers.put((request, done))
        return True

    def stream(self, request, *, read_timeout=None, on_open=None):
        return self.fake.stream(request, read_timeout=read_timeout, on_open=on_open)

    def _answer(self) -> None:
        while True:
            request, done = self._answers.get()
            done(self.fake.send(request))

    def sent_by(self, suffix: str) -> list[str]:
        return [thread for path, thread in self.senders if path.endswith(suffix)]


class AnsweredLaterWithFollowUps(AnsweredLater):
    """:class:`AnsweredLater` that chains a follow-up to a write, as the write processes
    do: rendered and sent on the ``answers`` thread once the write's answer is a
    success; recorded as sent by ``write process``."""

    chains = True

    def send_async_then(self, request: Request, done: Callable, follow_up) -> bool:
        def answered(answer: Response) -> None:
            if answer.status >= 300:
                follow_up.done(None, None)
                done(answer)
                return
            done(answer)
            then, token = follow_up.render(*follow_up.args)
            self.senders.append((then.path, "write process"))
            follow_up.done(token, self.fake.send(then))

        self.senders.append((request.path, threading.current_thread().name))
        self._answers.put((request, answered))
        return True


def make(api: Api, *, answered_later: bool = False) -> Scheduler:
    options = options_from_document(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "ts"}],
        },
        "c",
    )
    transport = AnsweredLater(api) if answered_later else FakeTransport(api)
    return Scheduler(transport, options, seed=1)


def api_node(name: str, zone: str, cpu: str = "4") -> dict:
    item = node(name, zone, cpu=cpu)
    item["metadata"]["resourceVersion"] = "1"
    return item


def api_pod(name: str, cpu: str = "100m", scheduler: str = "ts") -> dict:
    item = pod(name, "default", {"app": "x"}, cpu=cpu)
    item["metadata"].update(uid=f"uid-{name}", resourceVersion="1")
    item["spec"]["schedulerName"] = scheduler
    return item


def finish(scheduler: Scheduler) -> None:
    assert scheduler.drain(10)
    scheduler.events.flush()
    scheduler._writer.shutdown(wait=True)


def schedule_three_pods_on_three_nodes(scheduler: Scheduler) -> None:
    for i in range(3):
        scheduler.on_add(NODES, api_node(f"n{i}", f"z{i}"))
    for i in range(3):
        scheduler.on_add(PODS, api_pod(f"p{i}"))
    for _ in range(3):
        scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)


def test_a_pod_is_assumed_then_bound_and_confirmed():
    api = Api()
    scheduler = make(api)
    for i in range(3):
        scheduler.on_add(NODES, api_node(f"n{i}", f"z{i}"))
    scheduler.on_add(PODS, api_pod("p"))
    scheduler.on_add(PODS, api_pod("other", scheduler="someone-else"))
    assert [i.key for i in scheduler.queue.pods()] == ["default/p"]
    scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)
    (bind,) = api.by_path("/binding")
    body = json.loads(bind.body)
    assert body["metadata"]["uid"] == "uid-p"
    node_name = body["target"]["name"]
    assert scheduler.cache.pods["default/p"].assumed
    bound = api_pod("p")
    bound["spec"]["nodeName"] = node_name
    scheduler.on_update(PODS, api_pod("p"), bound)
    assert not scheduler.cache.pods["default/p"].assumed
    assert len(scheduler.cache.snapshot.get(node_name).pods) == 1
    (event,) = [json.loads(r.body) for r in api.by_path("/events")]
    assert event["reason"] == "Scheduled"
    assert event["note"] == f"Successfully assigned default/p to {node_name}"
    assert scheduler.metrics.schedule_attempts.labels("scheduled", "ts")._value.get() == 1


def test_events_go_through_a_client_of_their_own_and_binds_do_not():
    # kube-scheduler's createClients: the Events' client has a rate limiter of its own.
    api, events_api = Api(), Api()
    options = make(api).options
    scheduler = Scheduler(
        FakeTransport(api), options, seed=1, event_transport=FakeTransport(events_api)
    )
    for i in range(3):
        scheduler.on_add(NODES, api_node(f"n{i}", f"z{i}"))
    scheduler.on_add(PODS, api_pod("p"))
    scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)
    wait_for(lambda: len(events_api.by_path("/events")) == 1, 5, 0.01, "the Scheduled Event")
    assert len(api.by_path("/binding")) == 1
    assert api.by_path("/events") == []
    assert events_api.by_path("/binding") == []


@pytest.mark.parametrize("answered_later", [False, True], ids=["waited-for", "answered-later"])
def test_a_conflict_drops_the_pod_and_an_error_requeues_it(answered_later):
    for status, requeued in ((409, False), (500, True)):
        api = Api(bind_status=status)
        scheduler = make(api, answered_later=answered_later)
        scheduler.on_add(NODES, api_node("n0", "z0"))
        scheduler.on_add(PODS, api_pod("p"))
        scheduler.schedule_one(scheduler.queue.pop(0))
        finish(scheduler)
        assert "default/p" not in scheduler.cache.pods  # forgotten
        assert (scheduler.queue.where("default/p") == "backoff") is requeued
        assert scheduler.queue.where("default/p") in ("backoff", None)


def test_an_unschedulable_pod_gets_the_event_and_condition():
    api = Api()
    scheduler = make(api)
    scheduler.on_add(NODES, api_node("n0", "z0", cpu="1"))
    scheduler.on_add(NODES, api_node("n1", "z1", cpu="1"))
    scheduler.on_add(PODS, api_pod("big", cpu="8"))
    scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)
    message = (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )
    (event,) = [json.loads(r.body) for r in api.by_path("/events")]
    assert (event["reason"], event["action"], event["type"]) == (
        "FailedScheduling",
        "Scheduling",
        "Warning",
    )
    assert event["note"] == message
    assert event["reportingController"] == "ts"
    (patch,) = api.by_path("/status")
    assert patch.content_type == "application/strategic-merge-patch+json"
    (condition,) = json.loads(patch.body)["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "PodScheduled",
        "False",
        "Unschedulable",
    )
    assert condition["message"] == message
    assert scheduler.queue.where("default/big") == "unschedulable"
    # A bigger node arrives: NodeAdd moves the pod back.
    scheduler.on_add(NODES, api_node("n2", "z2", cpu="16"))
    assert scheduler.queue.where("default/big") in ("active", "backoff")


def test_no_nodes_is_unschedulable_not_an_error():
    api = Api()
    scheduler = make(api)
    scheduler.on_add(PODS, api_pod("p"))
    scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)
    (patch,) = api.by_path("/status")
    (condition,) = json.loads(patch.body)["status"]["conditions"]
    assert condition["reason"] == "Unschedulable"
    assert condition["message"] == "no nodes available to schedule pods"
    assert scheduler.queue.where("default/p") == "unschedulable"


def _dra_objects(admin_access: bool) -> list[tuple[object, dict]]:
    gpu = request("gpu")
    if admin_access:
        gpu["exactly"]["adminAccess"] = True
    return [
        (DEVICE_CLASSES, GPU_CLASS),
        (RESOURCE_SLICES, slice_("s0", [device("gpu-0")], node_name="n0")),
        (RESOURCE_CLAIMS, claim("c", [gpu])),
    ]


def _claim_pod(name: str, **reference: str) -> dict:
    item = api_pod(name)
    item["spec"]["resourceClaims"] = [{"name": "gpu", **reference}]
    return item


def test_a_pod_whose_devices_topospread_cannot_decide_is_refused_with_an_event():
    api = Api()
    scheduler = make(api)
    scheduler.on_add(NODES, api_node("n0", "z0"))
    for resource, obj in _dra_objects(admin_access=True):
        scheduler.on_add(resource, obj)  # type: ignore[arg-type]
    scheduler.on_add(PODS, _claim_pod("p", resourceClaimName="c"))
    scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)
    assert api.by_path("/binding") == []
    (event,) = [json.loads(r.body) for r in api.by_path("/events")]
    assert event["reason"] == "FailedScheduling"
    assert event["note"].startswith(
        "unsupported: topospread cannot decide this pod's devices as kube-scheduler does"
    )
    assert "admin access" in event["note"]
    assert scheduler.queue.where("default/p") == "unschedulable"


def test_a_pod_waits_silently_for_its_template_claim_then_is_scheduled_when_it_appears():
    api = Api()
    scheduler = make(api)
    scheduler.on_add(NODES, api_node("n0", "z0"))
    for resource, obj in _dra_objects(admin_access=False):
        scheduler.on_add(resource, obj)  # type: ignore[arg-type]
    waiting = _claim_pod("p", resourceClaimTemplateName="gpu-template")
    scheduler.on_add(PODS, waiting)
    # PreEnqueue holds it as it is added: no attempt, no Event, no condition.
    assert scheduler.queue.pop(0) is None
    assert scheduler.queue.pending_pods()["gated"] == 1
    assert api.writes == []
    # kube-controller-manager made claim "c2" for it (owned by the pod) and says so.
    owned = claim("c2", [request("gpu")], owner=True, owner_name="p", owner_uid="uid-p")
    scheduler.on_add(RESOURCE_CLAIMS, owned)
    created = json.loads(json.dumps(waiting))
    created["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c2"}]}
    scheduler.on_update(PODS, waiting, created)
    assert scheduler.queue.where("default/p") in ("active", "backoff")


RATIO_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "ratio-spread"


@pytest.mark.example_plugin
def test_a_pod_an_installed_plugin_rejected_is_retried_when_an_assigned_pod_is_deleted():
    # RatioSpread (examples/plugins/ratio-spread) keeps spot at 80 %, at most one pod over
    # its share: with 5 of the group on the only (spot) node a sixth would be 1.2 over,
    # with 4 it is 1.0 over. It declares no events, so like upstream's
    # defaultEnqueueExtension it is asked about every event; the deletion moves the pod.
    api = Api()
    document = yaml.safe_load((RATIO_EXAMPLE / "scheduler-config.yaml").read_text())
    scheduler = Scheduler(FakeTransport(api), options_from_document(document, "c"), seed=1)
    spot = api_node("spot-1", "z1")
    spot["metadata"]["labels"]["karpenter.sh/capacity-type"] = "spot"
    scheduler.on_add(NODES, spot)
    labels = {"app": "web", "ratio-spread.topospread.io/policy": "spot-80"}

    def group_pod(name: str, node_name: str = "") -> dict:
        item = pod(name, "default", labels, node_name=node_name)
        item["metadata"].update(uid=f"uid-{name}", resourceVersion="1")
        item["spec"]["schedulerName"] = "ratio-scheduler"
        return item

    placed = [group_pod(f"web-{i}", "spot-1") for i in range(5)]
    for item in placed:
        scheduler.on_add(PODS, item)
    scheduler.on_add(PODS, group_pod("web-new"))
    scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)
    assert scheduler.queue.where("default/web-new") == "unschedulable"
    (info,) = scheduler.queue.pods()
    assert info.unschedulable_plugins == {"RatioSpread"}
    scheduler.on_delete(PODS, placed[0])
    assert scheduler.queue.where("default/web-new") in ("active", "backoff")


def gang_scheduler(api: Api, wait: float, transport: object = None) -> Scheduler:
    options = options_from_document(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {"schedulerName": "ts", "plugins": {"permit": {"enabled": [{"name": GANG}]}}}
            ],
        },
        "c",
    )
    plugins = {**registry(), GANG: gang_factory(wait)}
    return Scheduler(transport or FakeTransport(api), options, registry=plugins, seed=1)


def gang_pod(name: str, size: int) -> dict:
    item = api_pod(name)
    item["metadata"]["labels"].update(gang="g", size=str(size))
    return item


def test_a_gang_waits_at_permit_on_the_bind_workers_until_it_is_complete():
    api = Api()
    scheduler = gang_scheduler(api, wait=30)
    for i in range(3):
        scheduler.on_add(NODES, api_node(f"n{i}", f"z{i}"))
    for i in range(3):
        scheduler.on_add(PODS, gang_pod(f"g{i}", 3))
    scheduler.schedule_one(scheduler.queue.pop(0))
    scheduler.schedule_one(scheduler.queue.pop(0))
    assert len(list(scheduler.waiting_pods)) == 2
    assert api.by_path("/binding") == []  # waiting, assumed in the cache
    assert sum(1 for p in scheduler.cache.pods.values() if p.assumed) == 2
    scheduler.schedule_one(scheduler.queue.pop(0))
    wait_for(lambda: len(api.by_path("/binding")) == 3, 10, what="the gang's binds")
    finish(scheduler)
    assert list(scheduler.waiting_pods) == []


def test_a_gang_that_times_out_is_unschedulable_and_forgotten():
    api = Api()
    scheduler = gang_scheduler(api, wait=0.2)
    scheduler.on_add(NODES, api_node("n0", "z0"))
    scheduler.on_add(PODS, gang_pod("g0", 2))
    scheduler.schedule_one(scheduler.queue.pop(0))
    wait_for(lambda: scheduler.queue.where("default/g0") == "unschedulable", 10, what="timeout")
    finish(scheduler)
    assert api.by_path("/binding") == []
    assert not scheduler.cache.pods  # the assumed pod was forgotten
    (event,) = [json.loads(r.body) for r in api.by_path("/events")]
    assert (event["reason"], event["note"]) == (
        "FailedScheduling",
        "0/1 nodes are available: 1 rejected due to timeout after waiting 200ms at plugin Gang.",
    )


def test_a_bind_reported_with_the_nodes_topology_labels_is_counted_with_them():
    # v1.37's binding copies the node's topology labels onto the pod; the informer's
    # report swaps the assumed object for the bound one, counters included.
    api = Api()
    scheduler = make(api)
    for i in range(3):
        scheduler.on_add(NODES, api_node(f"n{i}", f"z{i}"))
    snapshot = scheduler.cache.snapshot
    zoned = snapshot.pod_counter(
        "zoned", "default", lambda p: "topology.kubernetes.io/zone" in p.metadata.labels
    )
    assert zoned is not None
    names = [f"p{i}" for i in range(6)]
    for name in names:
        scheduler.on_add(PODS, api_pod(name))
    for _ in names:
        scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)
    usage_before = snapshot.table().usage(True).req_cpu.tolist()
    targets = {}
    for bind in api.by_path("/binding"):
        body = json.loads(bind.body)
        targets[body["metadata"]["name"]] = body["target"]["name"]
    for name, node_name in targets.items():
        bound = api_pod(name)
        bound["spec"]["nodeName"] = node_name
        zone = scheduler.cache.nodes[node_name].metadata.labels["topology.kubernetes.io/zone"]
        bound["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone
        scheduler.on_update(PODS, api_pod(name), bound)
    assert not any(cached.assumed for cached in scheduler.cache.pods.values())
    assert snapshot.table().usage(True).req_cpu.tolist() == usage_before
    for info in snapshot.node_infos:
        on_node = sorted(p.name for p in info.pods)
        assert on_node == sorted(n for n, target in targets.items() if target == info.name)
        assert all("topology.kubernetes.io/zone" in p.labels for p in info.pods)
        assert zoned.count(info.name) == len(on_node)


def test_a_bind_answered_later_holds_no_worker_and_finishes_where_the_answer_comes():
    api = Api()
    scheduler = make(api, answered_later=True)
    transport = scheduler.transport
    assert isinstance(transport, AnsweredLater)
    schedule_three_pods_on_three_nodes(scheduler)
    # The Bindings left from the scheduling thread (here the test's); the Scheduled
    # Events from the thread the answers came on; no bind worker or Event sender woke.
    me = threading.current_thread().name
    assert transport.sent_by("/binding") == [me] * 3
    assert transport.sent_by("/events") == ["answers"] * 3
    assert not scheduler._binder._threads
    notes = sorted(json.loads(r.body)["note"] for r in api.by_path("/events"))
    assert all(n.startswith("Successfully assigned default/p") for n in notes)
    assert scheduler.scheduled == 3
    assert scheduler.metrics.binds.labels("bound")._value.get() == 3


def test_the_scheduled_event_follows_its_binding_from_the_write_process_and_only_then():
    api = Api()
    options = make(api).options
    transport = AnsweredLaterWithFollowUps(api)
    scheduler = Scheduler(transport, options, seed=1)
    schedule_three_pods_on_three_nodes(scheduler)

    assert transport.sent_by("/events") == ["write process"] * 3
    events = [json.loads(r.body) for r in api.by_path("/events")]
    targets = {
        json.loads(r.body)["metadata"]["name"]: json.loads(r.body)["target"]["name"]
        for r in api.by_path("/binding")
    }
    assert sorted(e["note"] for e in events) == sorted(
        f"Successfully assigned default/{name} to {node}" for name, node in targets.items()
    )
    assert {(e["reportingController"], e["reason"], e["action"]) for e in events} == {
        ("ts", "Scheduled", "Binding")
    }
    assert scheduler.events.posted == 3
    assert scheduler.events.pending == 0
    assert scheduler.scheduled == 3
    assert scheduler._scheduled_with_bind == set()


@pytest.mark.parametrize(
    ("status", "reasons"), [(409, []), (500, ["FailedScheduling"])], ids=["gone", "error"]
)
def test_a_binding_that_fails_has_no_scheduled_event_after_it(status, reasons):
    api = Api(bind_status=status)
    transport = AnsweredLaterWithFollowUps(api)
    scheduler = Scheduler(transport, make(api).options, seed=1)
    scheduler.on_add(NODES, api_node("n0", "z0"))
    scheduler.on_add(PODS, api_pod("p"))
    scheduler.schedule_one(scheduler.queue.pop(0))
    finish(scheduler)

    assert len(api.by_path("/binding")) == 1
    wait_for(lambda: len(api.by_path("/events")) == len(reasons), 5, 0.01, "the Events")
    assert [json.loads(r.body)["reason"] for r in api.by_path("/events")] == reasons
    assert scheduler.events.pending == 0
    assert scheduler._scheduled_with_bind == set()


def test_a_pod_that_waited_at_permit_is_bound_by_a_worker_even_when_answers_come_later():
    api = Api()
    transport = AnsweredLater(api)
    scheduler = gang_scheduler(api, wait=30, transport=transport)
    for i in range(2):
        scheduler.on_add(NODES, api_node(f"n{i}", f"z{i}"))
    scheduler.on_add(PODS, gang_pod("g0", 2))
    scheduler.on_add(PODS, gang_pod("g1", 2))
    scheduler.schedule_one(scheduler.queue.pop(0))  # waits at Permit
    scheduler.schedule_one(scheduler.queue.pop(0))  # completes the gang: allowed at once
    wait_for(lambda: len(api.by_path("/binding")) == 2, 10, what="the gang's binds")
    finish(scheduler)
    senders = transport.sent_by("/binding")
    assert sorted(s.startswith("bind") for s in senders) == [False, True]
    assert threading.current_thread().name in senders


def test_a_failure_is_logged_at_kube_schedulers_level_an_error_as_an_error(caplog):
    api = Api()
    scheduler = make(api)
    scheduler.on_add(NODES, api_node("n0", "z0", cpu="1"))
    scheduler.on_add(PODS, api_pod("big", cpu="8"))
    info = scheduler.queue.pop(0)
    with caplog.at_level(logging.INFO, logger="topospread.scheduler"):
        scheduler.schedule_one(info)
        scheduler.failed(
            info, Failure("SchedulerError", "a plugin failed", None, "error"), time.perf_counter()
        )
    finish(scheduler)
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if "pod" in r.getMessage()]
    assert (logging.INFO, "Unable to schedule pod; no fit; waiting") in logged
    assert (logging.ERROR, "Error scheduling pod; retrying") in logged


def test_only_the_pod_informer_drops_managed_fields_as_in_kube_scheduler():
    scheduler = make(Api())

    dropping = [r.resource.plural for r in scheduler.reflectors if r.drop_managed_fields]

    assert dropping == ["pods"]
