"""The HTTPS server: AdmissionReviews over TLS, the deadline, and failing open or closed."""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from topospread.webhook import Policy, TLSFiles, Verdict, WebhookServer, decide

from .conftest import GHOST_SELECTOR_TEXT, Certificates, deployment, review


@pytest.fixture
def serve(certificates: Certificates) -> Iterator:
    started: list[WebhookServer] = []

    def start(policy: Policy | None = None, **kwargs) -> str:
        server = WebhookServer(
            policy or Policy(),
            TLSFiles(certificates.cert, certificates.key),
            "127.0.0.1",
            0,
            **kwargs,
        )
        server.start_background()
        started.append(server)
        return f"https://127.0.0.1:{server.port}"

    yield start
    for server in started:
        server.shutdown()


def _post(
    certificates: Certificates, url: str, body: bytes, content_type: str = "application/json"
) -> tuple[int, bytes]:
    context = ssl.create_default_context(cafile=str(certificates.ca))
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def _review(certificates: Certificates, url: str, obj: dict) -> dict:
    status, body = _post(certificates, url, json.dumps(review(obj)).encode())
    assert status == 200
    return json.loads(body)["response"]


def test_a_ghost_selector_is_denied_over_tls(serve, certificates):
    answer = _review(certificates, serve() + "/validate", deployment(ghost=True))

    assert answer["allowed"] is False
    assert GHOST_SELECTOR_TEXT in answer["status"]["message"]


def test_a_valid_deployment_is_allowed_over_tls(serve, certificates):
    answer = _review(certificates, serve() + "/validate?timeout=10s", deployment())

    assert answer["allowed"] is True


def test_a_review_past_the_deadline_is_allowed_with_a_warning(serve, certificates):
    def slow(request, policy):
        time.sleep(2)
        return decide(request, policy)

    url = serve(Policy(deadline_seconds=0.2), decide_review=slow) + "/validate"
    started = time.perf_counter()
    answer = _review(certificates, url, deployment(ghost=True))
    took = time.perf_counter() - started

    assert answer["allowed"] is True
    assert answer["warnings"] == [
        "topospread webhook: no decision within 0.2s; allowed without a spread review"
    ]
    assert took < 1.5


def test_the_api_servers_own_timeout_bounds_the_deadline(serve, certificates):
    # kube-apiserver appends its timeoutSeconds as ?timeout=1s; the answer leaves 0.5s early.
    def slow(request, policy):
        time.sleep(3)
        return Verdict(allowed=False)

    url = serve(Policy(deadline_seconds=10), decide_review=slow) + "/validate?timeout=1s"
    answer = _review(certificates, url, deployment())

    assert answer["warnings"] == [
        "topospread webhook: no decision within 0.5s; allowed without a spread review"
    ]


def test_failing_closed_denies_when_the_review_fails(serve, certificates):
    def broken(request, policy):
        raise RuntimeError("boom")

    url = serve(Policy(fail_closed=True), decide_review=broken) + "/validate"
    answer = _review(certificates, url, deployment())

    assert answer["allowed"] is False
    assert answer["status"]["message"] == (
        "topospread webhook: review failed: boom; denied (the webhook fails closed)"
    )


def test_a_body_that_is_no_admission_review_gets_400(serve, certificates):
    status, body = _post(certificates, serve() + "/validate", b'{"kind": "Pod"}')

    assert status == 400
    assert b"expected apiVersion admission.k8s.io/v1" in body


def test_json_nested_too_deeply_gets_400_not_a_dropped_connection(serve, certificates):
    status, body = _post(certificates, serve() + "/validate", b"[" * 200_000)

    assert (status, body) == (400, b"request body is not JSON: nested too deeply\n")


def test_a_body_that_is_not_json_by_its_content_type_gets_415(serve, certificates):
    body = json.dumps(review(deployment())).encode()
    status, answer = _post(certificates, serve() + "/validate", body, "text/plain")

    assert (status, answer) == (415, b"expected Content-Type: application/json\n")


def test_an_object_this_release_cannot_read_is_answered_by_the_failure_policy(
    serve, certificates, caplog
):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "strpod", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "pause"}],
            "topologySpreadConstraints": [
                {"maxSkew": "one", "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ],
        },
    }
    answer = _review(certificates, serve() + "/validate", pod)

    assert answer["allowed"] is True
    (warning,) = answer["warnings"]
    assert warning.startswith("topospread webhook: cannot read the object: Pod default/strpod: ")
    assert "Pod default/strpod: Pod default/strpod" not in warning
    assert not any(record.exc_info for record in caplog.records)


def test_other_paths_are_not_found_and_healthz_answers(serve, certificates):
    base = serve()
    context = ssl.create_default_context(cafile=str(certificates.ca))
    with urllib.request.urlopen(base + "/healthz", context=context, timeout=5) as answer:
        assert answer.read() == b"ok\n"
    status, _ = _post(certificates, base + "/mutate", b"{}")
    assert status == 404
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + "/validate", context=context, timeout=5)
    assert (refused.value.code, refused.value.headers["Allow"]) == (405, "POST")
    assert refused.value.headers["Server"] == "topospread-webhook"
    refused.value.close()


def test_concurrent_reviews_all_get_their_own_answer(serve, certificates):
    url = serve(workers=2) + "/validate"
    results: list[bool] = []

    def one(ghost: bool) -> None:
        allowed = _review(certificates, url, deployment(ghost=ghost))["allowed"]
        results.append(allowed is not ghost)

    threads = [threading.Thread(target=one, args=(i % 2 == 0,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert results == [True] * 8


def test_reviews_on_one_kept_alive_connection_are_not_held_by_delayed_acks(serve, certificates):
    # The API server reuses connections. Headers and body leave in two writes; with Nagle's
    # algorithm on, each answer waited for the client's delayed ACK: 40 ms or more each.
    import http.client
    import statistics

    port = int(serve().rsplit(":", 1)[1])
    context = ssl.create_default_context(cafile=str(certificates.ca))
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    body = json.dumps(review(deployment())).encode()
    took = []
    for _ in range(21):
        started = time.perf_counter()
        connection.request("POST", "/validate", body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        assert json.loads(answer.read())["response"]["allowed"] is True
        took.append(time.perf_counter() - started)
    connection.close()

    assert statistics.median(took) < 0.030


def _webhook(*arguments: str):
    from click.testing import CliRunner

    from topospread.cli.commands import cli

    return CliRunner().invoke(cli, ["webhook", *arguments])


def test_a_missing_certificate_file_is_named_in_one_line_with_exit_2(certificates):
    result = _webhook(
        "--tls-cert-file", "/nonexistent/tls.crt", "--tls-private-key-file", str(certificates.key)
    )

    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["/nonexistent/tls.crt: no such file"]


def test_a_key_that_does_not_match_the_certificate_is_one_line_with_exit_2(certificates):
    result = _webhook(
        "--tls-cert-file",
        str(certificates.cert),
        "--tls-private-key-file",
        str(certificates.ca.with_suffix(".key")),
    )

    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.endswith("not a matching PEM certificate and key: KEY_VALUES_MISMATCH")


def test_an_unknown_rule_is_one_line_with_exit_2(certificates):
    result = _webhook(
        "--tls-cert-file",
        str(certificates.cert),
        "--tls-private-key-file",
        str(certificates.key),
        "--disable",
        "no-such-rule",
    )

    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("--disable: unknown rule(s) no-such-rule (rules: ")


def test_the_review_log_names_an_object_by_its_generate_name(serve, certificates, caplog):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "web-", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }
    body = review(pod)
    body["request"]["name"] = ""
    with caplog.at_level(logging.INFO, logger="topospread.webhook"):
        status, _ = _post(certificates, serve() + "/validate", json.dumps(body).encode())
    assert status == 200
    (line,) = [json.loads(r.getMessage()) for r in caplog.records if r.getMessage().startswith("{")]
    assert line["object"] == "default/web-(generateName)"
