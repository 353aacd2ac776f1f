"""The framework's binding-cycle runners, as upstream's frameworkImpl runs them
(``pkg/scheduler/framework/runtime/framework.go``: RunReservePluginsReserve / Unreserve,
RunPermitPlugins, RunPreBindPlugins, RunBindPlugins, RunPostBindPlugins)."""

from __future__ import annotations

from dataclasses import replace

from topospread.framework.config.decode import default_configuration
from topospread.framework.config.types import PluginRef, Plugins, PluginSet, Profile
from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.framework.status import Code, Status
from topospread.framework.waiting import WaitingPods, go_duration, timeout_message
from topospread.model.objects import ObjectMeta, Pod
from topospread.plugins.registry import registry

POD = Pod(ObjectMeta(name="p", namespace="default", uid="u"))


class Recorder:
    def __init__(self, name: str, log: list[str], **statuses: Status) -> None:
        self.name = name
        self.log = log
        self.statuses = statuses

    def _run(self, point: str) -> Status | None:
        self.log.append(f"{self.name}.{point}")
        return self.statuses.get(point)

    def reserve(self, state, pod, node_name):
        return self._run("reserve")

    def unreserve(self, state, pod, node_name):
        self._run("unreserve")

    def permit(self, state, pod, node_name):
        return self._run("permit"), 0.0

    def pre_bind(self, state, pod, node_name):
        return self._run("pre_bind")

    def bind(self, state, pod, node_name):
        return self._run("bind")

    def post_bind(self, state, pod, node_name):
        self._run("post_bind")


def framework(*plugins: Recorder) -> Framework:
    refs = tuple(PluginRef(p.name) for p in plugins)
    profile = replace_plugins(Plugins(multi_point=PluginSet(enabled=refs)))
    factories = {p.name: _factory(p) for p in plugins}
    return Framework(profile, factories, Handle(Snapshot([])))


def _factory(plugin: Recorder):
    return lambda args, handle, features: plugin


def replace_plugins(plugins: Plugins) -> Profile:
    return replace(default_configuration().profiles[0], plugins=plugins)


def test_reserve_runs_in_order_and_unreserve_in_reverse():
    log: list[str] = []
    fw = framework(Recorder("A", log), Recorder("B", log))
    state = CycleState()
    assert fw.run_reserve_plugins_reserve(state, POD, "n").code is Code.SUCCESS
    fw.run_reserve_plugins_unreserve(state, POD, "n")
    assert log == ["A.reserve", "B.reserve", "B.unreserve", "A.unreserve"]


def test_a_reserve_error_stops_and_is_wrapped_a_rejection_is_attributed():
    log: list[str] = []
    fw = framework(Recorder("A", log, reserve=Status(Code.ERROR, ("boom",))), Recorder("B", log))
    status = fw.run_reserve_plugins_reserve(CycleState(), POD, "n")
    assert (status.code, status.message) == (Code.ERROR, 'running Reserve plugin "A": boom')
    assert log == ["A.reserve"]
    fw = framework(Recorder("A", log, reserve=Status(Code.UNSCHEDULABLE, ("full",))))
    status = fw.run_reserve_plugins_reserve(CycleState(), POD, "n")
    assert (status.code, status.plugin, status.message) == (Code.UNSCHEDULABLE, "A", "full")


class Waiter(Recorder):
    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(name, [], permit=Status(Code.WAIT))
        self.seconds = seconds

    def permit(self, state, pod, node_name):
        return Status(Code.WAIT), self.seconds


def waiting_framework(*plugins: Recorder) -> tuple[Framework, WaitingPods]:
    waiting = WaitingPods()
    fw = framework(*plugins)
    fw.handle = replace(fw.handle, waiting_pods=waiting)
    return fw, waiting


def test_permit_wait_registers_a_waiting_pod_until_every_waiting_plugin_allows_it():
    fw, waiting = waiting_framework(Waiter("A", 10), Waiter("B", 3600))
    status = fw.run_permit_plugins(CycleState(), POD, "n")
    assert status.code is Code.WAIT
    assert status.message == 'one or more plugins asked to wait and no plugin rejected pod "p"'
    pod = waiting.get("u")
    assert pod is not None
    assert pod.timeouts == {"A": 10, "B": 900}  # maxTimeout: 15 minutes
    outcomes: list[Status] = []
    pod.on_resolved(outcomes.append)
    pod.allow("A")
    assert outcomes == []
    assert pod.pending_plugins() == ["B"]
    pod.allow("B")
    assert [s.code for s in outcomes] == [Code.SUCCESS]
    pod.reject("B", "too late")  # the outcome stands
    assert pod.status is not None
    assert pod.status.code is Code.SUCCESS


def test_a_rejected_wait_is_unschedulable_by_the_rejecting_plugin():
    fw, waiting = waiting_framework(Waiter("A", 10))
    fw.run_permit_plugins(CycleState(), POD, "n")
    pod = waiting.get("u")
    assert pod is not None
    pod.reject("A", timeout_message(10, "A"))
    assert pod.status == Status(
        Code.UNSCHEDULABLE, ("rejected due to timeout after waiting 10s at plugin A",), "A"
    )


def test_a_rejection_beats_a_wait_and_without_a_binding_cycle_a_wait_is_an_error():
    fw, waiting = waiting_framework(
        Waiter("A", 10), Recorder("B", [], permit=Status.of(Code.UNSCHEDULABLE, "no"))
    )
    status = fw.run_permit_plugins(CycleState(), POD, "n")
    assert (status.code, status.plugin) == (Code.UNSCHEDULABLE, "B")
    assert waiting.get("u") is None
    status = framework(Waiter("A", 10)).run_permit_plugins(CycleState(), POD, "n")
    assert (status.code, status.message) == (
        Code.ERROR,
        'running Permit plugin "A": waiting on permit needs a binding cycle (none runs here)',
    )


def test_timeouts_are_written_as_go_writes_durations():
    assert [go_duration(s) for s in (10, 90, 0.5, 3600, 900, 1.25)] == [
        "10s",
        "1m30s",
        "500ms",
        "1h0m0s",
        "15m0s",
        "1.25s",
    ]


def test_prebind_skips_continue_errors_stop():
    log: list[str] = []
    fw = framework(
        Recorder("A", log, pre_bind=Status(Code.SKIP)),
        Recorder("B", log, pre_bind=Status(Code.ERROR, ("no",))),
        Recorder("C", log),
    )
    status = fw.run_pre_bind_plugins(CycleState(), POD, "n")
    assert status.message == 'running PreBind plugin "B": no'
    assert log == ["A.pre_bind", "B.pre_bind"]


def test_bind_the_first_plugin_that_does_not_skip_binds_then_postbind():
    log: list[str] = []
    fw = framework(Recorder("A", log, bind=Status(Code.SKIP)), Recorder("B", log))
    assert fw.run_bind_plugins(CycleState(), POD, "n").code is Code.SUCCESS
    fw.run_post_bind_plugins(CycleState(), POD, "n")
    assert log == ["A.bind", "B.bind", "A.post_bind", "B.post_bind"]
    # Every plugin skipping: Skip (the binding cycle then fails; upstream's validation
    # requires a bind plugin, DefaultBinder in the default profile).
    fw = framework(Recorder("A", [], bind=Status(Code.SKIP)))
    assert fw.run_bind_plugins(CycleState(), POD, "n").code is Code.SKIP


def test_the_default_profile_runs_the_volume_and_claim_binding_cycles_in_upstreams_order():
    # v1.37.1's default plugins: VolumeBinding before DynamicResources; Unreserve reverses.
    fw = Framework(default_configuration().profiles[0], registry(), Handle(Snapshot([])))
    assert [p.name for p in fw.reserve_plugins] == ["VolumeBinding", "DynamicResources"]
    assert [p.name for p in fw.pre_bind_plugins] == ["VolumeBinding", "DynamicResources"]
    assert [p.name for p in fw.bind_plugins] == ["DefaultBinder"]
    assert [p.name for p in fw.pre_enqueue_plugins] == ["SchedulingGates", "DynamicResources"]
    assert fw.queue_sort_plugin is not None
    assert fw.queue_sort_plugin.name == "PrioritySort"
    # The binding cycle's upstream-only plugins are not reported as unimplemented.
    assert not {"reserve", "pre_bind", "bind", "permit", "pre_enqueue"} & set(fw.unimplemented)


class PreFlightRecorder(Recorder):
    def pre_bind_pre_flight(self, state, pod, node_name):
        return self._run("pre_flight")


class AsyncBinder(Recorder):
    """Binds without waiting: holds ``done`` until the test answers, or refuses."""

    def __init__(self, name: str, log: list[str], *, accepts: bool = True) -> None:
        super().__init__(name, log)
        self.accepts = accepts
        self.pending: list = []

    binds_async = True

    def bind_async(self, state, pod, node_name, done):
        self.log.append(f"{self.name}.bind_async")
        if self.accepts:
            self.pending.append(done)
        return self.accepts


def test_pre_bind_pre_flights_skip_only_when_every_pre_bind_plugin_says_it_has_no_work():
    skip = {"pre_flight": Status(Code.SKIP)}
    assert (
        framework(PreFlightRecorder("A", [], **skip), PreFlightRecorder("B", [], **skip))
        .run_pre_bind_pre_flights(CycleState(), POD, "n")
        .code
        is Code.SKIP
    )
    # One with work: Success (upstream's RunPreBindPreFlights), the rest need not be asked.
    log: list[str] = []
    fw = framework(PreFlightRecorder("A", log), PreFlightRecorder("B", log, **skip))
    assert fw.run_pre_bind_pre_flights(CycleState(), POD, "n").code is Code.SUCCESS
    assert log == ["A.pre_flight"]
    # A PreBind plugin that cannot tell beforehand may have work.
    fw = framework(PreFlightRecorder("A", [], **skip), Recorder("B", []))
    assert fw.run_pre_bind_pre_flights(CycleState(), POD, "n").code is Code.SUCCESS
    failing = PreFlightRecorder("A", [], pre_flight=Status(Code.ERROR, ("lost state",)))
    status = framework(failing).run_pre_bind_pre_flights(CycleState(), POD, "n")
    assert (status.code, status.message) == (
        Code.ERROR,
        'running PreBindPreFlight "A": lost state',
    )


def test_the_default_pre_bind_plugins_have_no_work_for_a_pod_without_claims():
    fw = Framework(default_configuration().profiles[0], registry(), Handle(Snapshot([])))
    assert fw.run_pre_bind_pre_flights(CycleState(), POD, "n").code is Code.SKIP


def test_an_async_bind_reports_what_the_synchronous_bind_would():
    log: list[str] = []
    binder = AsyncBinder("A", log)
    fw = framework(binder)
    outcomes: list[Status] = []
    assert fw.run_bind_plugins_async(CycleState(), POD, "n", outcomes.append)
    assert fw.run_bind_plugins_async(CycleState(), POD, "n", outcomes.append)
    assert fw.run_bind_plugins_async(CycleState(), POD, "n", outcomes.append)
    assert outcomes == []  # nothing until the answers come
    bound, failed, rejected = binder.pending
    bound(None)
    failed(Status(Code.ERROR, ('pods "p" is forbidden',)))
    rejected(Status(Code.UNSCHEDULABLE, ("no room",)))
    assert [(s.code, s.message, s.plugin) for s in outcomes] == [
        (Code.SUCCESS, "", None),
        (Code.ERROR, 'running Bind plugin "A": pods "p" is forbidden', None),
        (Code.UNSCHEDULABLE, "no room", "A"),
    ]
    assert log == ["A.bind_async"] * 3


def test_no_async_bind_when_the_first_bind_plugin_cannot_or_will_not():
    outcomes: list[Status] = []
    refusing = AsyncBinder("A", [], accepts=False)
    assert not framework(refusing).run_bind_plugins_async(CycleState(), POD, "n", outcomes.append)
    # Only the first Bind plugin may bind this way: a synchronous one before it might bind.
    fw = framework(Recorder("S", []), AsyncBinder("A", []))
    assert not fw.binds_async
    assert not fw.run_bind_plugins_async(CycleState(), POD, "n", outcomes.append)
    assert outcomes == []
    # DefaultBinder without a port that sends without waiting (the simulator's, none):
    # the loop is not offered the async path at all.
    default = Framework(default_configuration().profiles[0], registry(), Handle(Snapshot([])))
    assert not default.binds_async
    assert framework(AsyncBinder("A", [])).binds_async
