"""The reflector's list/watch protocol against a fake API server (FakeTransport)."""

from __future__ import annotations

import json
from typing import Any

from topospread.client.source import PODS
from topospread.client.transport import FakeTransport, Request, Response
from topospread.errors import ClusterUnreachable
from topospread.scheduler.informer import Backoff, Reflector, Store


def obj(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def lines(*events: dict[str, Any]) -> bytes:
    return b"\n".join(json.dumps(e).encode() for e in events)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def on_add(self, resource, o):
        self.events.append(("add", o["metadata"]["name"]))

    def on_update(self, resource, old, new):
        self.events.append(("update", new["metadata"]["name"]))

    def on_delete(self, resource, o):
        self.events.append(("delete", o["metadata"]["name"]))


class FakeServer:
    """Answers lists and watches from scripted steps; stops the reflector at the end."""

    def __init__(self, lists: list[bytes], watches: list[Any]) -> None:
        self.lists = lists
        self.watches = watches
        self.reflector: Reflector | None = None

    def __call__(self, request: Request) -> Response:
        params = dict(request.query)
        if params.get("watch") == "true":
            if not self.watches:
                assert self.reflector is not None
                self.reflector._stop.set()
                return Response(200, b"")
            step = self.watches.pop(0)
            if isinstance(step, Exception):
                raise step
            return Response(200, step)
        return Response(200, self.lists.pop(0))


def run(server: FakeServer, recorder: Recorder) -> tuple[Reflector, FakeTransport]:
    transport = FakeTransport(server)
    reflector = Reflector(transport, PODS, recorder, watch_timeout=lambda: 300)
    reflector._backoff = Backoff(initial=0.0, maximum=0.0, jitter=0.0)
    server.reflector = reflector
    reflector.run()
    return reflector, transport


def listing(rv: str, *items: dict[str, Any]) -> bytes:
    return json.dumps({"metadata": {"resourceVersion": rv}, "items": list(items)}).encode()


def test_list_then_watch_with_bookmarks_then_relist_on_410():
    server = FakeServer(
        lists=[
            listing("10", obj("a", "5"), obj("b", "6")),
            listing("20", obj("a", "12"), obj("c", "11")),
        ],
        watches=[
            lines(
                {"type": "ADDED", "object": obj("c", "11")},
                {"type": "MODIFIED", "object": obj("a", "12")},
                {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "15"}}},
            ),
            lines(
                {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}
            ),
        ],
    )
    recorder = Recorder()
    reflector, transport = run(server, recorder)
    assert recorder.events == [
        ("add", "a"),
        ("add", "b"),  # the first list
        ("add", "c"),
        ("update", "a"),  # the watch
        ("delete", "b"),  # the relist: b is gone, a and c unchanged
    ]
    queries = [dict(r.query) for r in transport.requests]
    assert queries[0]["resourceVersion"] == "0"  # from the watch cache
    assert queries[1]["resourceVersion"] == "10"
    assert queries[1]["allowWatchBookmarks"] == "true"
    assert queries[2]["resourceVersion"] == "15"  # after the bookmark
    assert queries[3]["resourceVersion"] == ""  # consistent relist
    assert "limit" in queries[3]
    assert queries[4]["resourceVersion"] == "20"
    assert reflector.lists == 2
    assert set(reflector.store.items) == {"ns/a", "ns/c"}


def test_a_dropped_watch_resumes_from_the_last_version_without_a_relist():
    server = FakeServer(
        lists=[listing("10", obj("a", "5"))],
        watches=[
            lines({"type": "MODIFIED", "object": obj("a", "11")}),
            ClusterUnreachable("cannot connect to https://fake.invalid: connection refused"),
            lines({"type": "DELETED", "object": obj("a", "13")}),
        ],
    )
    recorder = Recorder()
    reflector, transport = run(server, recorder)
    assert recorder.events == [("add", "a"), ("update", "a"), ("delete", "a")]
    versions = [dict(r.query).get("resourceVersion") for r in transport.requests]
    assert versions == ["0", "10", "11", "11", "13"]
    assert reflector.lists == 1


def test_a_410_answer_to_the_watch_request_relists():
    gone = json.dumps(
        {"kind": "Status", "code": 410, "reason": "Gone", "message": "too old resource version"}
    ).encode()
    server = FakeServer(
        lists=[listing("10", obj("a", "5")), listing("30", obj("a", "5"))],
        watches=[gone],
    )
    recorder = Recorder()
    reflector, _ = run(server, recorder)
    assert reflector.lists == 2
    assert recorder.events == [("add", "a")]


def managed(name: str, rv: str) -> dict[str, Any]:
    written = obj(name, rv)
    written["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    return written


def test_the_pod_informer_keeps_no_managed_fields_as_kube_schedulers_does():
    server = FakeServer(
        lists=[listing("10", managed("a", "5"))],
        watches=[lines({"type": "ADDED", "object": managed("b", "11")})],
    )
    transport = FakeTransport(server)
    reflector = Reflector(transport, PODS, Recorder(), drop_managed_fields=True)
    server.reflector = reflector

    reflector.run()

    assert {key: o["metadata"] for key, o in reflector.store.items.items()} == {
        "ns/a": {"name": "a", "namespace": "ns", "resourceVersion": "5"},
        "ns/b": {"name": "b", "namespace": "ns", "resourceVersion": "11"},
    }


def test_an_informer_keeps_managed_fields_unless_told_to_drop_them():
    server = FakeServer(lists=[listing("10", managed("a", "5"))], watches=[])
    transport = FakeTransport(server)
    reflector = Reflector(transport, PODS, Recorder())
    server.reflector = reflector

    reflector.run()

    assert "managedFields" in reflector.store.items["ns/a"]["metadata"]


def test_store_replace_reports_only_changes():
    recorder = Recorder()
    store = Store(PODS, recorder)
    store.replace([obj("a", "1"), obj("b", "1")])
    store.replace([obj("a", "1"), obj("b", "2"), obj("c", "1")])
    assert recorder.events == [("add", "a"), ("add", "b"), ("update", "b"), ("add", "c")]


def test_backoff_doubles_with_a_ceiling():
    backoff = Backoff(initial=0.8, maximum=30.0, jitter=0.0)
    delays = [backoff.next() for _ in range(7)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0]
    backoff.reset()
    assert backoff.next() == 0.8


def test_an_api_group_the_server_does_not_serve_is_synced_empty_and_listed_again_later():
    from topospread.client.source import RESOURCE_CLAIMS

    answers: list[Request] = []

    def server(request: Request) -> Response:
        answers.append(request)
        reflector._stop.set()
        return Response(404, b'{"kind":"Status","code":404,"reason":"NotFound"}')

    recorder = Recorder()
    reflector = Reflector(FakeTransport(server), RESOURCE_CLAIMS, recorder)
    reflector.run()

    assert reflector.synced.is_set()
    assert reflector.store.items == {}
    assert [r.path for r in answers] == ["/apis/resource.k8s.io/v1/resourceclaims"]


END = {"k8s.io/initial-events-end": "true"}


def bookmark(rv: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": rv}
    if annotations:
        meta["annotations"] = annotations
    return {"type": "BOOKMARK", "object": {"metadata": meta}}


class WatchListServer(FakeServer):
    """:class:`FakeServer` that also answers watch-lists (``sendInitialEvents=true``) from
    scripted streams: bytes, or a Response (a refusal)."""

    def __init__(self, streams: list[Any], lists: list[bytes], watches: list[Any]) -> None:
        super().__init__(lists, watches)
        self.streams = streams

    def __call__(self, request: Request) -> Response:
        if dict(request.query).get("sendInitialEvents") == "true":
            step = self.streams.pop(0)
            return step if isinstance(step, Response) else Response(200, step)
        return super().__call__(request)


def run_streaming(server: WatchListServer, recorder: Recorder) -> tuple[Reflector, FakeTransport]:
    transport = FakeTransport(server)
    reflector = Reflector(transport, PODS, recorder, watch_timeout=lambda: 300, watch_list=True)
    reflector._backoff = Backoff(initial=0.0, maximum=0.0, jitter=0.0)
    server.reflector = reflector
    reflector.run()
    return reflector, transport


def kinds(transport: FakeTransport) -> list[str]:
    def kind(request: Request) -> str:
        params = dict(request.query)
        if params.get("sendInitialEvents") == "true":
            return "watch-list"
        return "watch" if params.get("watch") == "true" else "list"

    return [kind(r) for r in transport.requests]


def test_the_state_streams_then_the_same_stream_goes_on_as_the_watch():
    server = WatchListServer(
        streams=[
            lines(
                {"type": "ADDED", "object": obj("a", "5")},
                {"type": "ADDED", "object": obj("b", "6")},
                bookmark("7"),  # a progress bookmark: the state goes on
                {"type": "ADDED", "object": obj("c", "8")},
                bookmark("9", END),
                {"type": "MODIFIED", "object": obj("a", "12")},
            )
        ],
        lists=[],
        watches=[lines({"type": "DELETED", "object": obj("b", "13")})],
    )
    recorder = Recorder()
    reflector, transport = run_streaming(server, recorder)
    assert recorder.events == [
        ("add", "a"),
        ("add", "b"),
        ("add", "c"),
        ("update", "a"),
        ("delete", "b"),
    ]
    assert kinds(transport) == ["watch-list", "watch", "watch"]
    first = dict(transport.requests[0].query)
    assert first["resourceVersionMatch"] == "NotOlderThan"
    assert first["allowWatchBookmarks"] == "true"
    assert "resourceVersion" not in first  # a consistent read
    assert dict(transport.requests[1].query)["resourceVersion"] == "12"
    assert reflector.lists == reflector.streamed == 1
    assert reflector.synced.is_set()


def test_a_server_that_refuses_watch_lists_is_listed_instead():
    refusal = json.dumps(
        {
            "kind": "Status",
            "code": 422,
            "reason": "Invalid",
            "message": "resourceVersionMatch: Forbidden: sendInitialEvents requires ...",
        }
    ).encode()
    server = WatchListServer(
        streams=[Response(422, refusal)],
        lists=[listing("10", obj("a", "5"))],
        watches=[],
    )
    recorder = Recorder()
    reflector, transport = run_streaming(server, recorder)
    assert recorder.events == [("add", "a")]
    assert kinds(transport)[:3] == ["watch-list", "list", "watch"]
    assert dict(transport.requests[2].query)["resourceVersion"] == "10"
    assert (reflector.lists, reflector.streamed) == (1, 0)


def test_a_stream_that_ends_before_its_state_does_is_made_good_by_a_list():
    server = WatchListServer(
        streams=[
            lines(
                {"type": "ADDED", "object": obj("a", "5")},
                {"type": "ADDED", "object": obj("b", "6")},
            )
        ],
        lists=[listing("10", obj("a", "5"), obj("c", "7"))],
        watches=[],
    )
    recorder = Recorder()
    reflector, _ = run_streaming(server, recorder)
    assert recorder.events == [("add", "a"), ("add", "b"), ("delete", "b"), ("add", "c")]
    assert set(reflector.store.items) == {"ns/a", "ns/c"}


def test_after_an_expiry_the_state_streams_again_and_replaces_the_store():
    gone = json.dumps({"kind": "Status", "code": 410, "reason": "Expired"}).encode()
    server = WatchListServer(
        streams=[
            lines(
                {"type": "ADDED", "object": obj("a", "5")},
                {"type": "ADDED", "object": obj("b", "6")},
                bookmark("10", END),
            ),
            lines(
                {"type": "ADDED", "object": obj("a", "5")},
                {"type": "ADDED", "object": obj("c", "20")},
                bookmark("30", END),
            ),
        ],
        lists=[],
        watches=[gone],
    )
    recorder = Recorder()
    reflector, transport = run_streaming(server, recorder)
    assert recorder.events == [("add", "a"), ("add", "b"), ("delete", "b"), ("add", "c")]
    assert kinds(transport)[:3] == ["watch-list", "watch", "watch-list"]
    assert reflector.lists == reflector.streamed == 2
    assert reflector.last_resource_version == "30"
