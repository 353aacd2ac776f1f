"""Listing a cluster through the request seam: pages, expired tokens, refusals."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest

from topospread.client.source import (
    DRA_RESOURCES,
    NODES,
    PODS,
    read_resources,
    version_skew_note,
)
from topospread.client.transport import FakeTransport, Request, Response
from topospread.errors import ClusterError, Forbidden, Unauthorized


def _pods(names: list[str]) -> list[dict[str, object]]:
    return [{"metadata": {"name": n, "namespace": "default"}, "spec": {}} for n in names]


def _paged_server(pods: list[str], page: int, *, expire_after: int | None = None):
    """A fake API server that pages pods ``page`` at a time with continue tokens."""
    served = {"pages": 0}

    def handler(request: Request) -> Response:
        params = {
            k: v[0] for k, v in parse_qs("&".join(f"{k}={v}" for k, v in request.query)).items()
        }
        if request.path == "/api/v1/nodes":
            return Response(
                200,
                json.dumps({"kind": "NodeList", "items": [{"metadata": {"name": "n1"}}]}).encode(),
            )
        start = int(params.get("continue", "0"))
        if "continue" in params and expire_after is not None and served["pages"] >= expire_after:
            return Response(
                410, json.dumps({"kind": "Status", "reason": "Expired", "code": 410}).encode()
            )
        served["pages"] += 1
        limit = int(params["limit"]) if "limit" in params else len(pods)
        chunk = pods[start : start + limit]
        more = start + limit < len(pods)
        body = {
            "kind": "PodList",
            "metadata": {"continue": str(start + limit) if more else ""},
            "items": _pods(chunk),
        }
        return Response(200, json.dumps(body).encode())

    return handler


def test_a_list_follows_continue_tokens_until_the_last_page() -> None:
    names = [f"p{i}" for i in range(7)]
    transport = FakeTransport(_paged_server(names, 3))
    read = read_resources(transport, [PODS], page_size=3)
    assert [item["metadata"]["name"] for item in read.items] == names
    assert read.requests == 3
    assert [dict(r.query).get("continue") for r in transport.requests] == [None, "3", "6"]
    assert all(dict(r.query)["limit"] == "3" for r in transport.requests)


def test_list_items_get_the_kind_and_api_version_that_list_responses_leave_out() -> None:
    read = read_resources(FakeTransport(_paged_server(["a"], 10)), [NODES, PODS])
    assert [(i["apiVersion"], i["kind"]) for i in read.items] == [("v1", "Node"), ("v1", "Pod")]
    assert read.counts == {"Node": 1, "Pod": 1}


def test_an_expired_continue_token_falls_back_to_one_full_list() -> None:
    names = [f"p{i}" for i in range(5)]
    transport = FakeTransport(_paged_server(names, 2, expire_after=1))
    read = read_resources(transport, [PODS], page_size=2)
    assert [item["metadata"]["name"] for item in read.items] == names
    assert "limit" not in dict(transport.requests[-1].query)


def test_a_forbidden_list_names_the_verb_the_resource_and_the_rule_that_grants_it() -> None:
    message = (
        'pods is forbidden: User "reader" cannot list resource "pods" in API group "" '
        "at the cluster scope"
    )

    def handler(request: Request) -> Response:
        return Response(
            403, json.dumps({"kind": "Status", "message": message, "reason": "Forbidden"}).encode()
        )

    with pytest.raises(Forbidden) as caught:
        read_resources(FakeTransport(handler), [PODS])
    text = str(caught.value)
    assert text.startswith("https://fake.invalid: 403 Forbidden: pods is forbidden: User")
    assert (
        'a ClusterRole rule {apiGroups: [""], resources: ["pods"], verbs: ["list"]} grants it'
        in text
    )
    assert "\n" not in text


def test_refused_credentials_are_reported_as_401_in_one_line() -> None:
    transport = FakeTransport(
        lambda r: Response(401, b'{"kind":"Status","message":"Unauthorized"}')
    )
    with pytest.raises(Unauthorized, match=r"^https://fake.invalid: 401 Unauthorized: "):
        read_resources(transport, [NODES])


def test_a_response_that_is_not_json_is_a_cluster_error_not_a_traceback() -> None:
    transport = FakeTransport(lambda r: Response(200, b"<html>proxy login</html>"))
    with pytest.raises(ClusterError, match="list nodes: the response is not JSON"):
        read_resources(transport, [NODES])


@pytest.mark.parametrize(
    ("server_version", "expected"),
    [
        ("v1.37.1", None),
        ("v1.37.4-eks-1234", None),
        ("v1.31.0", "runs Kubernetes v1.31.0, older than the kube-scheduler v1.37.1"),
        ("v1.38.0", "runs Kubernetes v1.38.0, newer than the kube-scheduler v1.37.1"),
    ],
)
def test_a_server_of_another_minor_release_gets_a_warning(server_version, expected) -> None:
    note = version_skew_note(server_version, "https://k")
    if expected is None:
        assert note is None
    else:
        assert note is not None
        assert expected in note


def test_a_server_without_the_resource_api_has_no_claims_rather_than_an_error() -> None:
    # resource.k8s.io/v1 is GA since 1.34; an older server answers 404 for its lists.
    def handler(request: Request) -> Response:
        if request.path.startswith("/apis/resource.k8s.io/"):
            return Response(404, b'{"kind":"Status","reason":"NotFound","code":404}')
        return Response(200, b'{"items": []}')

    read = read_resources(FakeTransport(handler), [NODES, *DRA_RESOURCES])
    assert read.items == ()
    assert read.counts["ResourceClaim"] == 0


def test_a_missing_required_api_is_still_an_error() -> None:
    def handler(request: Request) -> Response:
        return Response(404, b'{"kind":"Status","reason":"NotFound","code":404}')

    with pytest.raises(ClusterError):
        read_resources(FakeTransport(handler), [NODES])
