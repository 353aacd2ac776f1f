"""One AdmissionReview (``admission.k8s.io/v1``) in, its response out: lint's findings as
warnings and denials.

No sockets here (``server.py`` serves this): :func:`parse_review` reads the request body,
:func:`decide` lints the object with :func:`topospread.engine.audit.lint` (the same rules,
words and severities as ``topospread lint``), :func:`fail_verdict` is the answer when
deciding overran its deadline or failed, and :func:`response` writes the AdmissionReview
the API server expects back.

Rules of the decision, and why:

- A finding at or above ``Policy.deny_at`` denies, with every such finding's text in
  ``status.message`` and code 400 (the object is at fault, as for the API server's own
  validation errors); findings at or above ``Policy.warn_at`` that do not deny are
  ``warnings`` (kubectl prints them as ``Warning: ...``).
- An object with a controller ``ownerReference`` (a Deployment's ReplicaSet, a ReplicaSet's
  Pod, a CronJob's Job) is allowed without a review: its owner was reviewed when a person
  created it, and denying the child would only make the controller retry forever.
- On UPDATE, a finding that the old object already had (same rule, same field path) warns
  but does not deny (ratcheting, as the API server's own validation ratchets): otherwise a
  workload admitted before the webhook existed could no longer be scaled or annotated, and
  the deployment controller's own revision-annotation updates would be refused.
- DELETE and CONNECT have nothing to lint and are allowed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.engine.audit import Finding, LintObject, Severity, lint
from topospread.errors import TopospreadError
from topospread.framework.config.types import SchedulerConfiguration
from topospread.model.workloads import decode_manifests

__all__ = [
    "ADMISSION_API_VERSION",
    "REVIEWED_KINDS",
    "AdmissionRequest",
    "Policy",
    "ReviewError",
    "Verdict",
    "decide",
    "fail_verdict",
    "finding_text",
    "parse_review",
    "response",
]

ADMISSION_API_VERSION: Final = "admission.k8s.io/v1"

REVIEWED_KINDS: Final = frozenset(
    {"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob", "Pod"}
)
"""The kinds lint checks; any other kind sent by a broader webhook rule is allowed."""

DENIED_CODE: Final = 400
"""``status.code`` of a denial: the object is invalid for the spread rules (kubectl shows
``Error from server (BadRequest)``); the API server passes the webhook's code through."""


class ReviewError(TopospreadError):
    """The request body is not an ``admission.k8s.io/v1`` AdmissionReview (HTTP 400)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What the webhook denies, warns about, and does when it cannot decide in time."""

    deny_at: Severity | None = Severity.ERROR
    """Deny for a finding at or above this severity; None: never deny."""
    warn_at: Severity | None = Severity.WARNING
    """Warn for a finding at or above this severity that does not deny; None: never."""
    fail_closed: bool = False
    """On a deadline overrun or an internal error: deny (True) or allow with a warning."""
    deadline_seconds: float = 2.0
    """How long a review may take before :func:`fail_verdict` answers instead."""
    disabled: frozenset[str] = frozenset()
    """Rules left out (lint's ``--disable``)."""
    configuration: SchedulerConfiguration | None = None
    """The KubeSchedulerConfiguration whose default constraints apply (upstream's if None)."""


@dataclass(frozen=True, slots=True)
class AdmissionRequest:
    """The parts of ``AdmissionReview.request`` the decision reads."""

    uid: str
    operation: str
    kind: str
    """``request.kind.kind`` (the object's kind as the webhook rule matched it)."""
    namespace: str
    name: str
    object: Mapping[str, Any] | None
    old_object: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """Allowed or not; the warnings and, when denied, the message."""

    allowed: bool
    warnings: tuple[str, ...] = ()
    message: str = ""
    findings: tuple[Finding, ...] = field(default=(), compare=False)


def parse_review(body: bytes) -> AdmissionRequest:
    """The request of an AdmissionReview body; :class:`ReviewError` when it is not one."""
    try:
        review = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReviewError(f"request body is not JSON: {exc}") from None
    except RecursionError:
        raise ReviewError("request body is not JSON: nested too deeply") from None
    if not isinstance(review, dict):
        raise ReviewError("request body is not an AdmissionReview object")
    if review.get("apiVersion") != ADMISSION_API_VERSION or review.get("kind") != "AdmissionReview":
        raise ReviewError(
            f"expected apiVersion {ADMISSION_API_VERSION}, kind AdmissionReview; got "
            f"apiVersion {review.get('apiVersion')!r}, kind {review.get('kind')!r}"
        )
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
        raise ReviewError("AdmissionReview has no request.uid")
    kind = request.get("kind")
    obj, old = request.get("object"), request.get("oldObject")
    return AdmissionRequest(
        uid=request["uid"],
        operation=str(request.get("operation", "")),
        kind=str(kind.get("kind", "")) if isinstance(kind, dict) else "",
        namespace=str(request.get("namespace") or ""),
        name=str(request.get("name") or ""),
        object=obj if isinstance(obj, dict) else None,
        old_object=old if isinstance(old, dict) else None,
    )


def finding_text(f: Finding) -> str:
    """A finding in one line, as lint words it: rule, field path, message and fix (an
    api-validation message begins with its field path already)."""
    where = "" if f.message.startswith(f"{f.field_path}:") else f"{f.field_path}: "
    return f"{f.rule}: {where}{f.message} (fix: {f.fix})"


def _at_or_above(severity: Severity, threshold: Severity | None) -> bool:
    return threshold is not None and severity.rank <= threshold.rank


def _controlled(obj: Mapping[str, Any]) -> bool:
    meta = obj.get("metadata")
    owners = meta.get("ownerReferences") if isinstance(meta, dict) else None
    return isinstance(owners, list) and any(
        isinstance(o, dict) and o.get("controller") is True for o in owners
    )


def _findings(obj: Mapping[str, Any], request: AdmissionRequest, policy: Policy) -> list[Finding]:
    document = dict(obj)
    meta = dict(document.get("metadata") or {})
    # The object of a CREATE carries its namespace; a defaulted one may not: the request's.
    if request.namespace and not meta.get("namespace"):
        meta["namespace"] = request.namespace
    document["metadata"] = meta
    # The decoder names the object in each problem (``Pod default/web: spec...``).
    decoded = decode_manifests([document])
    items = [LintObject(o) for _, o in decoded.objects]
    report = lint(items, policy.configuration, disabled=policy.disabled)
    return list(report.findings)


def decide(request: AdmissionRequest, policy: Policy) -> Verdict:
    """Lint the request's object and decide; raises only on an internal problem (the
    caller answers with :func:`fail_verdict` then)."""
    obj = request.object
    if (
        request.operation not in {"CREATE", "UPDATE"}
        or obj is None
        or request.kind not in REVIEWED_KINDS
        or _controlled(obj)
    ):
        return Verdict(allowed=True)
    findings = _findings(obj, request, policy)
    if not findings:
        return Verdict(allowed=True)
    grandfathered: set[tuple[str, str]] = set()
    if request.operation == "UPDATE" and request.old_object is not None:
        grandfathered = {
            (f.rule, f.field_path) for f in _findings(request.old_object, request, policy)
        }
    denying = [
        f
        for f in findings
        if _at_or_above(f.severity, policy.deny_at) and (f.rule, f.field_path) not in grandfathered
    ]
    warning = [
        f
        for f in findings
        if f not in denying
        and (_at_or_above(f.severity, policy.warn_at) or _at_or_above(f.severity, policy.deny_at))
    ]
    return Verdict(
        allowed=not denying,
        warnings=tuple(finding_text(f) for f in warning),
        message="; ".join(finding_text(f) for f in denying),
        findings=tuple(findings),
    )


def fail_verdict(reason: str, policy: Policy) -> Verdict:
    """The answer when the review overran its deadline or failed: allowed with a warning
    (fail open) unless the policy fails closed."""
    text = f"topospread webhook: {reason}"
    if policy.fail_closed:
        return Verdict(allowed=False, message=f"{text}; denied (the webhook fails closed)")
    return Verdict(allowed=True, warnings=(f"{text}; allowed without a spread review",))


def response(uid: str, verdict: Verdict) -> dict[str, Any]:
    """The AdmissionReview the API server expects back for ``uid``."""
    answer: dict[str, Any] = {"uid": uid, "allowed": verdict.allowed}
    if verdict.warnings:
        answer["warnings"] = list(_printable(verdict.warnings))
    if not verdict.allowed:
        answer["status"] = {
            "code": DENIED_CODE,
            "reason": "BadRequest",
            "message": verdict.message,
        }
    return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": answer}


def _printable(warnings: Iterable[str]) -> Iterable[str]:
    # Warnings travel as HTTP Warning headers: the API server refuses control characters.
    for w in warnings:
        yield "".join(c if c.isprintable() else " " for c in w)
