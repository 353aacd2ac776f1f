"""The replica's lifecycle: what a stopping leader does, in which order."""

from __future__ import annotations

from topospread.client.transport import FakeTransport, Request, Response
from topospread.scheduler.app import SchedulerApp
from topospread.scheduler.options import options_from_document


def _not_found(_request: Request) -> Response:
    return Response(404, b"{}")


def test_a_stopping_leader_releases_its_lease_before_it_posts_the_queued_events() -> None:
    # A standby waits for the Lease; after a burst the queued Events can take seconds.
    options = options_from_document(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "leaderElection": {"leaderElect": True},
        },
        "config.yaml",
    )
    app = SchedulerApp(FakeTransport(_not_found), options, port=0)
    scheduler, elector = app.scheduler, app.elector
    assert elector is not None
    steps: list[str] = []
    real_stop = scheduler.stop
    scheduler.stop_scheduling = lambda *, drain_timeout: steps.append("binds drained")  # type: ignore[method-assign]
    scheduler.stop = lambda *, drain_timeout: steps.append("events posted")  # type: ignore[method-assign]
    elector.stop = lambda *, release: steps.append(f"lease released: {release}")  # type: ignore[method-assign]
    app.stop()
    assert steps == ["binds drained", "lease released: True", "events posted"]
    assert app.state == "stopped"
    real_stop()
