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
