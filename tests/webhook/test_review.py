"""The AdmissionReview handling, without a server: lint's findings become warnings and
denials in the words lint prints."""

from __future__ import annotations

import json

import pytest

from topospread.engine.audit import Severity
from topospread.webhook import (
    Policy,
    ReviewError,
    decide,
    fail_verdict,
    parse_review,
    response,
)

from .conftest import GHOST_SELECTOR_TEXT, deployment, review


def _decide(body: dict, policy: Policy | None = None):
    return decide(parse_review(json.dumps(body).encode()), policy or Policy())


def test_a_ghost_selector_deployment_is_denied_with_the_findings_text():
    verdict = _decide(review(deployment(ghost=True)))

    answer = response("uid-1", verdict)["response"]
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 400
    assert answer["status"]["message"].startswith(
        "ghost-selector: spec.template.spec.topologySpreadConstraints[0]: " + GHOST_SELECTOR_TEXT
    )
    assert (
        "(fix: make the labelSelector select the pod template's labels)"
        in (answer["status"]["message"])
    )


def test_a_valid_deployment_is_allowed_without_warnings():
    answer = response("uid-2", _decide(review(deployment())))["response"]

    assert answer == {"uid": "uid-2", "allowed": True}


def test_the_response_is_an_admission_review_naming_the_request_uid():
    body = response("705ab4f5", _decide(review(deployment())))

    assert body["apiVersion"] == "admission.k8s.io/v1"
    assert body["kind"] == "AdmissionReview"
    assert body["response"]["uid"] == "705ab4f5"


def test_with_deny_on_none_the_same_finding_is_only_a_warning():
    verdict = _decide(review(deployment(ghost=True)), Policy(deny_at=None))

    assert verdict.allowed
    assert any(GHOST_SELECTOR_TEXT in w for w in verdict.warnings)


def test_findings_below_the_deny_severity_are_warnings():
    # Without matchLabelKeys: [pod-template-hash] a rolling update skews the spread: a
    # warning for a hard constraint, which denies only at --deny-on warning.
    obj = deployment()
    del obj["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["matchLabelKeys"]

    warned = _decide(review(obj))
    denied = _decide(review(obj), Policy(deny_at=Severity.WARNING))

    assert warned.allowed
    assert [w.split(":")[0] for w in warned.warnings] == ["missing-pod-template-hash"]
    assert not denied.allowed
    assert denied.message.startswith("missing-pod-template-hash: ")


def test_disabled_rules_neither_deny_nor_warn():
    verdict = _decide(
        review(deployment(ghost=True)),
        Policy(disabled=frozenset({"ghost-selector"})),
    )

    assert verdict.allowed
    assert verdict.warnings == ()


def test_an_object_the_api_server_would_refuse_is_denied_in_its_words():
    obj = deployment()
    obj["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["maxSkew"] = 0

    verdict = _decide(review(obj))

    assert not verdict.allowed
    assert verdict.message.startswith(
        "api-validation: spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid "
        "value: 0: must be greater than zero (fix: "
    )


def test_a_pod_is_reviewed_like_a_workload():
    template = deployment(ghost=True)["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "lone", "namespace": "default", **template["metadata"]},
        "spec": template["spec"],
    }

    verdict = _decide(review(pod))

    assert not verdict.allowed
    assert "ghost-selector: spec.topologySpreadConstraints[0]" in verdict.message


def test_objects_a_controller_creates_are_allowed_unreviewed():
    # The Deployment was reviewed when a person created it; denying its ReplicaSet would
    # only make the deployment controller retry.
    replica_set = deployment(ghost=True)
    replica_set["kind"] = "ReplicaSet"
    replica_set["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u1",
         "controller": True}
    ]  # fmt: skip

    assert _decide(review(replica_set)).allowed


def test_an_update_keeping_an_old_finding_warns_instead_of_denying():
    old = deployment(ghost=True)
    scaled = deployment(ghost=True)
    scaled["spec"]["replicas"] = 5

    verdict = _decide(review(scaled, "UPDATE", old))

    assert verdict.allowed
    assert any(w.startswith("ghost-selector: ") for w in verdict.warnings)


def test_an_update_that_introduces_a_finding_is_denied():
    verdict = _decide(review(deployment(ghost=True), "UPDATE", deployment()))

    assert not verdict.allowed
    assert GHOST_SELECTOR_TEXT in verdict.message


def test_delete_is_allowed_without_a_review():
    assert _decide(review(None, "DELETE", deployment(ghost=True))).allowed


def test_kinds_lint_does_not_check_are_allowed():
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}

    assert _decide(review(config_map)).allowed


def test_failing_open_allows_with_a_warning_and_failing_closed_denies():
    opened = fail_verdict("no decision within 2s", Policy())
    closed = fail_verdict("no decision within 2s", Policy(fail_closed=True))

    assert opened.allowed
    assert opened.warnings == (
        "topospread webhook: no decision within 2s; allowed without a spread review",
    )
    assert not closed.allowed
    assert closed.message == (
        "topospread webhook: no decision within 2s; denied (the webhook fails closed)"
    )


def test_warnings_carry_no_control_characters():
    # The API server passes warnings on as HTTP Warning headers.
    from topospread.webhook import Verdict

    answer = response("u", Verdict(allowed=True, warnings=("a\nb\tc",)))["response"]

    assert answer["warnings"] == ["a b c"]


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"not json", "request body is not JSON"),
        (b"[]", "not an AdmissionReview object"),
        (b'{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}',
         "expected apiVersion admission.k8s.io/v1"),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}',
         "has no request.uid"),
    ],
)  # fmt: skip
def test_a_body_that_is_not_an_admission_review_is_refused(body, problem):
    with pytest.raises(ReviewError, match=problem):
        parse_review(body)
