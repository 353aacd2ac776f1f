"""DynamicResources' writes for the live scheduler's binding port (the API side).

The plugin (``plugins/dynamicresources``) plans the allocations in Reserve and assumes
them through the port; its PreBind and Unreserve write through the port, which the live
scheduler implements with these functions, as upstream's plugin writes
(``dynamicresources.go`` v1.37.1):

* PreBind (``bindClaim``), for each claim not yet reserved for the pod, retried on
  conflict (``retry.DefaultRetry``: 5 tries) with the claim read again: a claim being
  deleted fails (``claim ns/name got deleted in the meantime``); a claim this scheduler
  allocates must still be unallocated (``... got allocated elsewhere in the meantime``),
  gets the ``resource.kubernetes.io/delete-protection`` finalizer, then its
  ``status.allocation``; every claim gets the pod in ``status.reservedFor`` and, if it has
  none, an ``allocationTimestamp``; one status write does both. Upstream's Update and
  UpdateStatus are merge patches here, each with the resourceVersion read, so they fail
  (and are retried) exactly when upstream's would. Devices with binding conditions are
  refused before the cycle, so PreBind never waits.
* Unreserve: a reservation PreBind already wrote is removed with upstream's
  strategic-merge patch of ``status`` (errors only logged).

The allocation's ``devices.config`` is assembled here from the DeviceClass and claim as
the API serves them (``allocator_incubating.go``): the configs of each class used, in
request order, each listing the requests that used the class; then the claim's configs
that apply to an allocated request; a config that applies to every request lists none.

Failures are the pod's scheduling error, worded as upstream's PreBind wraps them (the
framework adds ``running PreBind plugin "DynamicResources": ``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from topospread.client.source import DEVICE_CLASSES, RESOURCE_CLAIMS
from topospread.client.transport import Request, Transport, status_message
from topospread.framework.binding import ClaimAllocation
from topospread.model.objects import NodeSelector, NodeSelectorRequirement, Pod
from topospread.model.resource import ResourceClaim

__all__ = [
    "DELETE_PROTECTION_FINALIZER",
    "ClaimBindingError",
    "bind_pod_claims",
    "render_allocation",
    "unreserve_claims",
]

log = logging.getLogger("topospread.scheduler")

DELETE_PROTECTION_FINALIZER: Final = "resource.kubernetes.io/delete-protection"
"""``resourceapi.Finalizer``: set by the scheduler on a claim it allocates."""
CONFLICT_RETRIES: Final = 5
"""``retry.DefaultRetry.Steps``."""
_RETRY_DELAY: Final = 0.01


class ClaimBindingError(Exception):
    """PreBind failed; the message is the status text upstream reports."""


def _key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


class _Conflict(Exception):
    """409: the claim changed since it was read; read it again and retry."""


def _get_claim(transport: Transport, claim: ResourceClaim, what: str) -> dict[str, Any]:
    path = RESOURCE_CLAIMS.path(claim.metadata.namespace, claim.metadata.name)
    response = transport.send(Request("GET", path))
    if response.status != 200:
        raise ClaimBindingError(f"{what}: {status_message(response)}")
    obj: dict[str, Any] = orjson.loads(response.data)
    return obj


def _patch(
    transport: Transport, path: str, patch: dict[str, Any], version: str, what: str
) -> dict[str, Any]:
    # A merge patch carrying the read resourceVersion: the server refuses it (409) when the
    # claim changed meanwhile, as upstream's Update of its copy. Not a PUT of the object
    # read back: the server compares opaque parameters byte for byte, and a re-encoded
    # spec would be "field is immutable".
    patch.setdefault("metadata", {})["resourceVersion"] = version
    response = transport.send(
        Request(
            "PATCH", path, body=orjson.dumps(patch), content_type="application/merge-patch+json"
        )
    )
    if response.status == 409:
        raise _Conflict(f"{what}: {status_message(response)}")
    if not 200 <= response.status < 300:
        raise ClaimBindingError(f"{what}: {status_message(response)}")
    written: dict[str, Any] = orjson.loads(response.data)
    return written


def _reserved_for_pod(obj: dict[str, Any], pod: Pod) -> bool:
    reserved = (obj.get("status") or {}).get("reservedFor") or ()
    return any(ref.get("uid") == pod.metadata.uid for ref in reserved)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _bind_claim(
    transport: Transport,
    pod: Pod,
    item: ClaimAllocation,
    device_class: Callable[[str], dict[str, Any] | None],
) -> None:
    claim = item.claim
    key = _key(claim)
    path = RESOURCE_CLAIMS.path(claim.metadata.namespace, claim.metadata.name)
    obj = _get_claim(transport, claim, f"get claim {key}")
    conflict = ""
    for attempt in range(CONFLICT_RETRIES):
        if attempt:
            time.sleep(_RETRY_DELAY)
            obj = _get_claim(transport, claim, f"get updated claim {key} after conflict")
        if _reserved_for_pod(obj, pod):
            return
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            raise ClaimBindingError(f"claim {key} got deleted in the meantime")
        status = obj.get("status") or {}
        try:
            update: dict[str, Any] = {}
            if item.allocation is not None:
                if status.get("allocation"):
                    raise ClaimBindingError(f"claim {key} got allocated elsewhere in the meantime")
                finalizers = list(meta.get("finalizers") or ())
                if DELETE_PROTECTION_FINALIZER not in finalizers:
                    obj = _patch(
                        transport,
                        path,
                        {"metadata": {"finalizers": [*finalizers, DELETE_PROTECTION_FINALIZER]}},
                        str(meta.get("resourceVersion", "")),
                        f"add finalizer to claim {key}",
                    )
                    meta = obj.get("metadata") or {}
                    status = obj.get("status") or {}
                update["allocation"] = render_allocation(item, obj, device_class)
            elif not status.get("allocation"):
                raise ClaimBindingError(f"claim {key} got deallocated elsewhere in the meantime")
            reservation = {"resource": "pods", "name": pod.name, "uid": pod.metadata.uid}
            update["reservedFor"] = [*(status.get("reservedFor") or ()), reservation]
            allocation = update.get("allocation") or status.get("allocation") or {}
            if not allocation.get("allocationTimestamp"):
                update.setdefault("allocation", {})["allocationTimestamp"] = _now()
            what = (
                f"add allocation and reservation to claim {key}"
                if item.allocation is not None
                else f"add reservation to claim {key}"
            )
            _patch(
                transport,
                f"{path}/status",
                {"status": update},
                str(meta.get("resourceVersion", "")),
                what,
            )
            return
        except _Conflict as error:
            conflict = str(error)
    raise ClaimBindingError(conflict)


def bind_pod_claims(
    transport: Transport, pod: Pod, planned: Sequence[ClaimAllocation]
) -> list[str]:
    """PreBind: allocate and reserve each claim for ``pod``; the keys of the claims now
    reserved for it. Raises :class:`ClaimBindingError` with upstream's error text."""
    classes: dict[str, dict[str, Any] | None] = {}

    def device_class(name: str) -> dict[str, Any] | None:
        if name not in classes:
            response = transport.send(Request("GET", DEVICE_CLASSES.path(None, name)))
            classes[name] = orjson.loads(response.data) if response.status == 200 else None
        return classes[name]

    done: list[str] = []
    for item in planned:
        _bind_claim(transport, pod, item, device_class)
        done.append(_key(item.claim))
    return done


def unreserve_claims(transport: Transport, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
    """Unreserve's API part: take the pod out of the claims' ``reservedFor`` (upstream's
    strategic-merge patch of the status; failures are logged, as upstream logs them)."""
    for item in planned:
        claim = item.claim
        patch = {
            "metadata": {"uid": claim.metadata.uid},
            "status": {"reservedFor": [{"$patch": "delete", "uid": pod.metadata.uid}]},
        }
        path = RESOURCE_CLAIMS.path(claim.metadata.namespace, claim.metadata.name) + "/status"
        response = transport.send(
            Request(
                "PATCH",
                path,
                body=json.dumps(patch).encode(),
                content_type="application/strategic-merge-patch+json",
            )
        )
        if not 200 <= response.status < 300 and response.status != 404:
            log.warning(
                "unreserve claim failed",
                extra={"claim": _key(claim), "pod": pod.key, "detail": status_message(response)},
            )


# -- the allocation as the API writes it ---------------------------------------------------


def render_allocation(
    item: ClaimAllocation,
    claim_object: dict[str, Any],
    device_class: Callable[[str], dict[str, Any] | None],
) -> dict[str, Any]:
    """``status.allocation`` of one claim allocated here (without the timestamp)."""
    allocation = item.allocation
    if allocation is None:
        raise ValueError(f"claim {_key(item.claim)} is not allocated by this scheduler")
    devices: dict[str, Any] = {
        "results": [
            {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
            for r in allocation.results
        ]
    }
    config = _configs(item, claim_object, device_class)
    if config:
        devices["config"] = config
    rendered: dict[str, Any] = {"devices": devices}
    if allocation.node_selector is not None:
        rendered["nodeSelector"] = _node_selector(allocation.node_selector)
    return rendered


def _configs(
    item: ClaimAllocation,
    claim_object: dict[str, Any],
    device_class: Callable[[str], dict[str, Any] | None],
) -> list[dict[str, Any]]:
    configs: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    for class_name, request in item.class_requests:
        entries = by_class.get(class_name)
        if entries is None:
            entries = by_class[class_name] = []
            found = device_class(class_name) or {}
            for entry in (found.get("spec") or {}).get("config") or ():
                config = {"source": "FromClass", "requests": [request], **entry}
                entries.append(config)
                configs.append(config)
        else:
            for config in entries:
                config["requests"].append(request)
    selected = {request for _, request in item.class_requests}
    top_level = {request.split("/", 1)[0] for request in selected}
    spec_devices = (claim_object.get("spec") or {}).get("devices") or {}
    for entry in spec_devices.get("config") or ():
        requests = entry.get("requests") or []
        if requests and not any(r in top_level or r in selected for r in requests):
            continue
        configs.append({"source": "FromClaim", **entry})
    for config in configs:
        # A config that names every request applies to all: it lists none.
        named = set(config.get("requests") or ())
        if named and all(
            top in named or any(s in named for s in selected if s.split("/", 1)[0] == top)
            for top in top_level
        ):
            config.pop("requests", None)
    return configs


def _requirements(requirements: Sequence[NodeSelectorRequirement]) -> list[dict[str, Any]]:
    return [
        {"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
        for r in requirements
    ]


def _node_selector(selector: NodeSelector) -> dict[str, Any]:
    terms = []
    for term in selector.node_selector_terms:
        rendered: dict[str, Any] = {}
        if term.match_expressions:
            rendered["matchExpressions"] = _requirements(term.match_expressions)
        if term.match_fields:
            rendered["matchFields"] = _requirements(term.match_fields)
        terms.append(rendered)
    return {"nodeSelectorTerms": terms}
