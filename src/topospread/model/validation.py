"""API-server validation of the fields the scheduler reads, with upstream's paths and messages.

This mirrors ``pkg/apis/core/validation/validation.go`` of Kubernetes v1.37.1 and
``k8s.io/apimachinery/pkg/apis/meta/v1/validation`` for label selectors, restricted to
what scheduling depends on: labels, ``nodeSelector``, affinity, tolerations, topology
spread constraints, scheduling gates and ``nodeName`` of pods; labels and taints of
nodes; and the selectors of the workload objects that feed default spreading. Fields
the scheduler never reads (container names and images, volumes, ...) are not checked,
so a pod that passes here may still be rejected by a real API server for other reasons.

Every function returns the complete list of problems, in the order upstream reports
them, as :class:`~topospread.errors.FieldError` values whose ``str()`` is the API
server's message word for word. Upstream iterates Go maps (labels, ``matchLabels``)
in random order; here they are visited in their insertion order.

Pods are validated as on *create* with the default feature gates of v1.37.1:

* ``MatchLabelKeysInPodTopologySpread`` (beta, on) and
  ``MatchLabelKeysInPodTopologySpreadSelectorMerge`` (beta since v1.34, on): the API
  server first appends ``key In [value]`` to each constraint's ``labelSelector`` for
  every ``matchLabelKeys`` key the pod has a label for (:func:`merge_match_label_keys`),
  then validates the merged result with ``ValidateMatchLabelKeysAndMismatchLabelKeys``.
* ``MatchLabelKeysInPodAffinity`` (GA, locked on): the same merge for inter-pod
  (anti-)affinity terms, with ``NotIn`` for ``mismatchLabelKeys``.
* ``TaintTolerationComparisonOperators`` (alpha, off): toleration operators ``Gt`` and
  ``Lt`` are rejected as unsupported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from topospread.errors import ErrorType, FieldError, go_quote
from topospread.model import fieldschema
from topospread.model.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from topospread.model.objects import (
    Affinity,
    ClaimTemplate,
    Deployment,
    DeploymentStrategy,
    KubeObject,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolumeClaimSpec,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PreferredSchedulingTerm,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from topospread.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
    VolumeAttachment,
)

__all__ = [
    "merge_match_label_keys",
    "validate_affinity",
    "validate_claim_template",
    "validate_csi_driver",
    "validate_csi_node",
    "validate_csi_storage_capacity",
    "validate_deployment_strategy",
    "validate_label_name",
    "validate_label_selector",
    "validate_label_selector_requirement",
    "validate_labels",
    "validate_match_label_keys_and_mismatch_label_keys",
    "validate_match_label_keys_in_topology_spread",
    "validate_node",
    "validate_node_affinity",
    "validate_node_selector",
    "validate_node_selector_requirement",
    "validate_node_selector_term",
    "validate_node_taints",
    "validate_object",
    "validate_persistent_volume",
    "validate_persistent_volume_claim",
    "validate_persistent_volume_claim_spec",
    "validate_pod",
    "validate_pod_affinity_term",
    "validate_pod_disruption_budget",
    "validate_pod_template",
    "validate_positive_int_or_percent",
    "validate_preferred_scheduling_terms",
    "validate_replica_set",
    "validate_replication_controller",
    "validate_service",
    "validate_stateful_set",
    "validate_storage_class",
    "validate_storage_object",
    "validate_tolerations",
    "validate_topology_spread_constraints",
    "validate_volume_attachment",
    "validate_workload_spec",
]

IS_NOT_POSITIVE_ERROR_MSG = "must be greater than zero"

_SUPPORTED_SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
"""``sets.List`` of the supported ``whenUnsatisfiable`` values: sorted."""
_SUPPORTED_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_OBJECT_NAME_FIELD = "metadata.name"


# -- field paths, rendered as field.Path.String() renders them ---------------------------


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, index: int | str) -> str:
    return f"{path}[{index}]"


def _values_value(values: Sequence[str]) -> object:
    # A nil []string marshals to null; decoded objects cannot tell nil from empty.
    return list(values) if values else None


# -- labels and selectors (apimachinery meta/v1/validation) --------------------------------


def validate_label_name(name: str, path: str) -> list[FieldError]:
    """``ValidateLabelName``: one ``Invalid value`` per problem with ``name`` as a label key."""
    return [FieldError.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str], path: str) -> list[FieldError]:
    """``ValidateLabels``: keys and values of a label map, all reported at ``path`` itself."""
    errs: list[FieldError] = []
    for key, value in labels.items():
        errs.extend(validate_label_name(key, path))
        errs.extend(FieldError.invalid(path, value, msg) for msg in is_valid_label_value(value))
    return errs


def validate_label_selector_requirement(
    requirement: LabelSelectorRequirement,
    path: str,
    *,
    allow_invalid_label_value: bool = False,
) -> list[FieldError]:
    """``ValidateLabelSelectorRequirement``: operator/value-count rules, key and value syntax."""
    errs: list[FieldError] = []
    op = requirement.operator
    if op in ("In", "NotIn"):
        if not requirement.values:
            errs.append(
                FieldError.required(
                    _child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if requirement.values:
            errs.append(
                FieldError.forbidden(
                    _child(path, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        errs.append(
            FieldError.invalid(_child(path, "operator"), op, "not a valid selector operator")
        )
    errs.extend(validate_label_name(requirement.key, _child(path, "key")))
    if not allow_invalid_label_value:
        values_path = _child(path, "values")
        for i, value in enumerate(requirement.values):
            errs.extend(
                FieldError.invalid(_index(values_path, i), value, msg)
                for msg in is_valid_label_value(value)
            )
    return errs


def validate_label_selector(
    selector: LabelSelector | None,
    path: str,
    *,
    allow_invalid_label_value: bool = False,
) -> list[FieldError]:
    """``ValidateLabelSelector``: ``matchLabels``, then each ``matchExpressions`` entry."""
    if selector is None:
        return []
    errs = validate_labels(selector.match_labels, _child(path, "matchLabels"))
    expressions_path = _child(path, "matchExpressions")
    for i, requirement in enumerate(selector.match_expressions):
        errs.extend(
            validate_label_selector_requirement(
                requirement,
                _index(expressions_path, i),
                allow_invalid_label_value=allow_invalid_label_value,
            )
        )
    return errs


# -- node selectors and node affinity --------------------------------------------------------


def validate_node_selector_requirement(
    requirement: NodeSelectorRequirement,
    path: str,
    *,
    allow_invalid_label_value: bool = False,
) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement``: a ``matchExpressions`` entry of a node selector term."""
    errs: list[FieldError] = []
    op = requirement.operator
    values_path = _child(path, "values")
    if op in ("In", "NotIn"):
        if not requirement.values:
            errs.append(
                FieldError.required(
                    values_path, "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if requirement.values:
            errs.append(
                FieldError.forbidden(
                    values_path,
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif op in ("Gt", "Lt"):
        if len(requirement.values) != 1:
            errs.append(
                FieldError.required(
                    values_path, "must be specified single value when `operator` is 'Lt' or 'Gt'"
                )
            )
    else:
        errs.append(
            FieldError.invalid(_child(path, "operator"), op, "not a valid selector operator")
        )
    errs.extend(validate_label_name(requirement.key, _child(path, "key")))
    if not allow_invalid_label_value:
        for i, value in enumerate(requirement.values):
            errs.extend(
                FieldError.invalid(_index(values_path, i), value, msg)
                for msg in is_valid_label_value(value)
            )
    return errs


def validate_node_field_selector_requirement(
    requirement: NodeSelectorRequirement, path: str
) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: ``matchFields`` allow only ``metadata.name``
    with ``In``/``NotIn`` and exactly one value, which must be a valid node name."""
    errs: list[FieldError] = []
    if requirement.operator in ("In", "NotIn"):
        if len(requirement.values) != 1:
            errs.append(
                FieldError.required(
                    _child(path, "values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' "
                    "for node field selector",
                )
            )
    else:
        errs.append(
            FieldError.invalid(
                _child(path, "operator"), requirement.operator, "not a valid selector operator"
            )
        )
    if requirement.key != _OBJECT_NAME_FIELD:
        errs.append(
            FieldError.invalid(
                _child(path, "key"), requirement.key, "not a valid field selector key"
            )
        )
    else:
        values_path = _child(path, "values")
        for i, value in enumerate(requirement.values):
            errs.extend(
                FieldError.invalid(_index(values_path, i), value, msg)
                for msg in is_dns1123_subdomain(value)
            )
    return errs


def validate_node_selector_term(
    term: NodeSelectorTerm, path: str, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``ValidateNodeSelectorTerm``: its ``matchExpressions`` then its ``matchFields``."""
    errs: list[FieldError] = []
    for j, requirement in enumerate(term.match_expressions):
        errs.extend(
            validate_node_selector_requirement(
                requirement,
                _index(_child(path, "matchExpressions"), j),
                allow_invalid_label_value=allow_invalid_label_value,
            )
        )
    for j, requirement in enumerate(term.match_fields):
        errs.extend(
            validate_node_field_selector_requirement(
                requirement, _index(_child(path, "matchFields"), j)
            )
        )
    return errs


def validate_node_selector(
    selector: NodeSelector, path: str, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``ValidateNodeSelector``: at least one term, and each term valid."""
    terms_path = _child(path, "nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [FieldError.required(terms_path, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(selector.node_selector_terms):
        errs.extend(
            validate_node_selector_term(
                term, _index(terms_path, i), allow_invalid_label_value=allow_invalid_label_value
            )
        )
    return errs


def validate_preferred_scheduling_terms(
    terms: Sequence[PreferredSchedulingTerm], path: str
) -> list[FieldError]:
    """``ValidatePreferredSchedulingTerms``: weight in 1..100; label values are not checked,
    since a preference that can never match is harmless."""
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        if term.weight <= 0 or term.weight > 100:
            errs.append(
                FieldError.invalid(
                    _child(_index(path, i), "weight"), term.weight, "must be in the range 1-100"
                )
            )
        errs.extend(
            validate_node_selector_term(
                term.preference,
                _child(_index(path, i), "preference"),
                allow_invalid_label_value=True,
            )
        )
    return errs


def validate_node_affinity(
    affinity: NodeAffinity, path: str, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``validateNodeAffinity``: the required node selector, then the preferred terms.

    ``allow_invalid_label_value`` is ``AllowInvalidLabelValueInRequiredNodeAffinity``,
    which an update sets when the stored pod already had such a value (kubernetes#128212).
    """
    errs: list[FieldError] = []
    if affinity.required is not None:
        errs.extend(
            validate_node_selector(
                affinity.required,
                _child(path, "requiredDuringSchedulingIgnoredDuringExecution"),
                allow_invalid_label_value=allow_invalid_label_value,
            )
        )
    if affinity.preferred:
        errs.extend(
            validate_preferred_scheduling_terms(
                affinity.preferred, _child(path, "preferredDuringSchedulingIgnoredDuringExecution")
            )
        )
    return errs


# -- inter-pod affinity ------------------------------------------------------------------------


def validate_pod_affinity_term(term: PodAffinityTerm, path: str) -> list[FieldError]:
    """``validatePodAffinityTerm``: selectors, namespaces, match/mismatch label keys, topologyKey.

    An empty ``topologyKey`` is reported as required *and* as an invalid label name, as upstream.
    """
    errs = validate_label_selector(term.label_selector, _child(path, "labelSelector"))
    errs.extend(validate_label_selector(term.namespace_selector, _child(path, "namespaceSelector")))
    for name in term.namespaces:
        # Upstream reports these at ".namespace" (singular).
        errs.extend(
            FieldError.invalid(_child(path, "namespace"), name, msg)
            for msg in is_dns1123_label(name)
        )
    errs.extend(
        validate_match_label_keys_and_mismatch_label_keys(
            path, term.match_label_keys, term.mismatch_label_keys, term.label_selector
        )
    )
    if not term.topology_key:
        errs.append(FieldError.required(_child(path, "topologyKey"), "can not be empty"))
    errs.extend(validate_label_name(term.topology_key, _child(path, "topologyKey")))
    return errs


def _validate_pod_affinity_terms(terms: Sequence[PodAffinityTerm], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        errs.extend(validate_pod_affinity_term(term, _index(path, i)))
    return errs


def _validate_weighted_pod_affinity_terms(
    terms: Sequence[WeightedPodAffinityTerm], path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, weighted in enumerate(terms):
        if weighted.weight <= 0 or weighted.weight > 100:
            errs.append(
                FieldError.invalid(
                    _child(_index(path, j), "weight"), weighted.weight, "must be in the range 1-100"
                )
            )
        errs.extend(
            validate_pod_affinity_term(weighted.term, _child(_index(path, j), "podAffinityTerm"))
        )
    return errs


def validate_affinity(
    affinity: Affinity | None, path: str, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``validateAffinity``: node affinity, pod affinity, pod anti-affinity, in that order
    (``allow_invalid_label_value``: see :func:`validate_node_affinity`)."""
    if affinity is None:
        return []
    errs: list[FieldError] = []
    if affinity.node_affinity is not None:
        errs.extend(
            validate_node_affinity(
                affinity.node_affinity,
                _child(path, "nodeAffinity"),
                allow_invalid_label_value=allow_invalid_label_value,
            )
        )
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred = "preferredDuringSchedulingIgnoredDuringExecution"
    for name, req, pref in (
        ("podAffinity", affinity.pod_affinity_required, affinity.pod_affinity_preferred),
        (
            "podAntiAffinity",
            affinity.pod_anti_affinity_required,
            affinity.pod_anti_affinity_preferred,
        ),
    ):
        base = _child(path, name)
        errs.extend(_validate_pod_affinity_terms(req, _child(base, required)))
        errs.extend(_validate_weighted_pod_affinity_terms(pref, _child(base, preferred)))
    return errs


# -- tolerations and taints --------------------------------------------------------------------


def _validate_taint_effect(effect: str, path: str, *, allow_empty: bool) -> list[FieldError]:
    if not allow_empty and not effect:
        return [FieldError.required(path)]
    if effect in _TAINT_EFFECTS:
        return []
    return [FieldError.not_supported(path, effect, _TAINT_EFFECTS)]


def validate_tolerations(tolerations: Sequence[Toleration], path: str) -> list[FieldError]:
    """``ValidateTolerations``, gate ``TaintTolerationComparisonOperators`` off (v1.37 default)."""
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        idx = _index(path, i)
        if toleration.key:
            errs.extend(validate_label_name(toleration.key, _child(idx, "key")))
        # An empty key with operator Exists matches every taint; any other operator needs a key.
        if not toleration.key and toleration.operator != "Exists":
            errs.append(
                FieldError.invalid(
                    _child(idx, "operator"),
                    toleration.operator,
                    "operator must be Exists when `key` is empty, "
                    'which means "match all values and all keys"',
                )
            )
        if toleration.toleration_seconds is not None and toleration.effect != "NoExecute":
            errs.append(
                FieldError.invalid(
                    _child(idx, "effect"),
                    toleration.effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if toleration.operator in ("Equal", ""):
            msgs = is_valid_label_value(toleration.value)
            if msgs:
                # Upstream reports a bad value at ".operator", joined with ";".
                errs.append(
                    FieldError.invalid(_child(idx, "operator"), toleration.value, ";".join(msgs))
                )
        elif toleration.operator == "Exists":
            if toleration.value:
                errs.append(
                    FieldError.invalid(
                        _child(idx, "operator"),
                        toleration.value,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        elif toleration.operator in ("Lt", "Gt"):
            errs.append(
                FieldError.not_supported(
                    _child(idx, "operator"), toleration.operator, ("Equal", "Exists", "Lt", "Gt")
                )
            )
        else:
            errs.append(
                FieldError.not_supported(
                    _child(idx, "operator"), toleration.operator, ("Equal", "Exists")
                )
            )
        if toleration.effect:
            errs.extend(
                _validate_taint_effect(toleration.effect, _child(idx, "effect"), allow_empty=True)
            )
    return errs


def _taint_value(taint: Taint) -> dict[str, object]:
    # The internal core.Taint has no JSON tags, so upstream prints Go field names.
    return {"Key": taint.key, "Value": taint.value, "Effect": taint.effect, "TimeAdded": None}


def validate_node_taints(taints: Sequence[Taint], path: str) -> list[FieldError]:
    """``validateNodeTaints``: key, value and effect of each taint; unique by (key, effect)."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        idx = _index(path, i)
        errs.extend(validate_label_name(taint.key, _child(idx, "key")))
        msgs = is_valid_label_value(taint.value)
        if msgs:
            errs.append(FieldError.invalid(_child(idx, "value"), taint.value, ";".join(msgs)))
        errs.extend(_validate_taint_effect(taint.effect, _child(idx, "effect"), allow_empty=False))
        if (taint.effect, taint.key) in seen:
            errs.append(
                FieldError(
                    ErrorType.DUPLICATE,
                    idx,
                    _taint_value(taint),
                    "taints must be unique by key and effect pair",
                )
            )
            continue
        seen.add((taint.effect, taint.key))
    return errs


# -- topology spread constraints ---------------------------------------------------------------


def _validate_positive(value: int, path: str) -> list[FieldError]:
    if value <= 0:
        return [FieldError.invalid(path, value, IS_NOT_POSITIVE_ERROR_MSG)]
    return []


def validate_match_label_keys_and_mismatch_label_keys(
    path: str,
    match_label_keys: Sequence[str],
    mismatch_label_keys: Sequence[str],
    selector: LabelSelector | None,
) -> list[FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys``: the check applied to a selector that
    already carries the expressions merged from the keys (see :func:`merge_match_label_keys`).

    1. each key is a valid label name, and neither list may be set without a selector;
    2. a ``matchLabelKeys`` key is reported when its key occurs in ``matchExpressions`` and
       also earlier in the selector (in ``matchLabels`` or a previous expression) — i.e.
       when the user had written the key themselves besides the merged expression.
       Upstream reports this at ``<path>[i]`` (not ``<path>.matchLabelKeys[i]``), a known
       imperfection (kubernetes#129900) kept here word for word;
    3. a key may not be in both ``matchLabelKeys`` and ``mismatchLabelKeys``.
    """
    errs = _validate_label_keys(_child(path, "matchLabelKeys"), match_label_keys, selector)
    errs.extend(
        _validate_label_keys(_child(path, "mismatchLabelKeys"), mismatch_label_keys, selector)
    )
    if selector is not None:
        key_index = {key: i for i, key in enumerate(match_label_keys)}
        selector_keys = set(selector.match_labels)
        for expression in selector.match_expressions:
            key = expression.key
            i = key_index.get(key)
            if i is not None and key in selector_keys:
                errs.append(
                    FieldError.invalid(
                        _index(path, i), key, "exists in both matchLabelKeys and labelSelector"
                    )
                )
            selector_keys.add(key)
    mismatch = set(mismatch_label_keys)
    for i, key in enumerate(match_label_keys):
        if key in mismatch:
            errs.append(
                FieldError.invalid(
                    _index(_child(path, "matchLabelKeys"), i),
                    key,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    return errs


def _validate_label_keys(
    path: str, keys: Sequence[str], selector: LabelSelector | None
) -> list[FieldError]:
    if not keys:
        return []
    if selector is None:
        return [FieldError.forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, key in enumerate(keys):
        errs.extend(validate_label_name(key, _index(path, i)))
    return errs


def validate_match_label_keys_in_topology_spread(
    path: str, match_label_keys: Sequence[str], selector: LabelSelector | None
) -> list[FieldError]:
    """``ValidateMatchLabelKeysInTopologySpread``: the legacy (pre-merge) rule, used when
    ``MatchLabelKeysInPodTopologySpreadSelectorMerge`` is off: no selector → Forbidden; each
    key a valid label name and absent from the selector."""
    if not match_label_keys:
        return []
    errs: list[FieldError] = []
    selector_keys: set[str] = set()
    if selector is not None:
        selector_keys.update(selector.match_labels)
        selector_keys.update(e.key for e in selector.match_expressions)
    else:
        errs.append(
            FieldError.forbidden(path, "must not be specified when labelSelector is not set")
        )
    for i, key in enumerate(match_label_keys):
        errs.extend(validate_label_name(key, _index(path, i)))
        if key in selector_keys:
            errs.append(
                FieldError.invalid(
                    _index(path, i), key, "exists in both matchLabelKeys and labelSelector"
                )
            )
    return errs


def _find_duplicate(
    constraint: TopologySpreadConstraint, rest: Iterable[TopologySpreadConstraint]
) -> bool:
    return any(
        constraint.topology_key == other.topology_key
        and constraint.when_unsatisfiable == other.when_unsatisfiable
        for other in rest
    )


def validate_topology_spread_constraints(
    constraints: Sequence[TopologySpreadConstraint],
    path: str,
    *,
    selector_merge: bool = True,
) -> list[FieldError]:
    """``validateTopologySpreadConstraints`` as v1.37.1 runs it for a pod create.

    Per constraint, in upstream order: ``maxSkew`` > 0; ``topologyKey`` non-empty (its
    syntax is *not* checked here upstream); ``whenUnsatisfiable`` supported; the pair
    (topologyKey, whenUnsatisfiable) not repeated by a *later* constraint (reported at the
    earlier one); ``minDomains`` > 0 and only with ``DoNotSchedule``; node inclusion
    policies supported; ``matchLabelKeys``; then the label selector.

    ``selector_merge`` selects the ``matchLabelKeys`` rule: ``True`` (the v1.37 default,
    gate ``MatchLabelKeysInPodTopologySpreadSelectorMerge``) expects ``constraints`` as
    stored after :func:`merge_match_label_keys`; ``False`` applies the legacy rule.
    """
    errs: list[FieldError] = []
    for i, c in enumerate(constraints):
        sub = _index(path, i)
        errs.extend(_validate_positive(c.max_skew, _child(sub, "maxSkew")))
        if not c.topology_key:
            errs.append(FieldError.required(_child(sub, "topologyKey"), "can not be empty"))
        if c.when_unsatisfiable not in _SUPPORTED_SCHEDULE_ACTIONS:
            errs.append(
                FieldError.not_supported(
                    _child(sub, "whenUnsatisfiable"),
                    c.when_unsatisfiable,
                    _SUPPORTED_SCHEDULE_ACTIONS,
                )
            )
        if _find_duplicate(c, constraints[i + 1 :]):
            errs.append(
                FieldError.duplicate(
                    _child(sub, "{topologyKey, whenUnsatisfiable}"),
                    f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                )
            )
        if c.min_domains is not None:
            min_path = _child(sub, "minDomains")
            errs.extend(_validate_positive(c.min_domains, min_path))
            if c.when_unsatisfiable != "DoNotSchedule":
                errs.append(
                    FieldError.invalid(
                        min_path,
                        c.min_domains,
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                        f"not {c.when_unsatisfiable}",
                    )
                )
        for name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in _SUPPORTED_NODE_INCLUSION_POLICIES:
                errs.append(
                    FieldError.not_supported(
                        _child(sub, name), policy, _SUPPORTED_NODE_INCLUSION_POLICIES
                    )
                )
        if selector_merge:
            errs.extend(
                validate_match_label_keys_and_mismatch_label_keys(
                    sub, c.match_label_keys, (), c.label_selector
                )
            )
        else:
            errs.extend(
                validate_match_label_keys_in_topology_spread(
                    _child(sub, "matchLabelKeys"), c.match_label_keys, c.label_selector
                )
            )
        errs.extend(validate_label_selector(c.label_selector, _child(sub, "labelSelector")))
    return errs


# -- the create-time mutation ------------------------------------------------------------------


def _append_label_keys(
    selector: LabelSelector, keys: Sequence[str], operator: str, labels: Mapping[str, str]
) -> LabelSelector:
    added = tuple(
        LabelSelectorRequirement(key, operator, (labels[key],)) for key in keys if key in labels
    )
    if not added:
        return selector
    return replace(selector, match_expressions=selector.match_expressions + added)


def _merge_constraint(
    c: TopologySpreadConstraint, labels: Mapping[str, str]
) -> TopologySpreadConstraint:
    # A nil selector matches nothing, so upstream leaves it nil rather than creating one.
    if not c.match_label_keys or c.label_selector is None:
        return c
    return replace(
        c, label_selector=_append_label_keys(c.label_selector, c.match_label_keys, "In", labels)
    )


def _merge_affinity_term(term: PodAffinityTerm, labels: Mapping[str, str]) -> PodAffinityTerm:
    if (not term.match_label_keys and not term.mismatch_label_keys) or term.label_selector is None:
        return term
    selector = _append_label_keys(term.label_selector, term.match_label_keys, "In", labels)
    selector = _append_label_keys(selector, term.mismatch_label_keys, "NotIn", labels)
    return replace(term, label_selector=selector)


def _merge_weighted(
    term: WeightedPodAffinityTerm, labels: Mapping[str, str]
) -> WeightedPodAffinityTerm:
    return replace(term, term=_merge_affinity_term(term.term, labels))


def merge_match_label_keys(pod: Pod) -> Pod:
    """The pod as the API server stores it after create: ``matchLabelKeys`` merged into selectors.

    Mirrors ``PrepareForCreate`` in ``pkg/registry/core/pod/strategy.go`` of v1.37.1:

    * ``mutateTopologySpreadConstraints`` (gates ``MatchLabelKeysInPodTopologySpread`` and
      ``MatchLabelKeysInPodTopologySpreadSelectorMerge``, both on by default since v1.34):
      for each constraint with ``matchLabelKeys`` and a non-nil ``labelSelector``, append
      ``key In [pod.labels[key]]`` to ``matchExpressions`` for every key the pod has a
      label for, in ``matchLabelKeys`` order; keys the pod lacks are skipped.
    * ``mutatePodAffinity`` (gate ``MatchLabelKeysInPodAffinity``, GA and locked on): the
      same for inter-pod (anti-)affinity terms, ``In`` for ``matchLabelKeys`` and then
      ``NotIn`` for ``mismatchLabelKeys``.

    ``matchLabelKeys`` itself is kept. The mutation is not idempotent — applying it to a
    pod read back from a cluster appends the expressions a second time — so apply it only
    to pods that have not been through an API server (manifests), never to stored ones.
    """
    labels = pod.metadata.labels
    constraints = tuple(_merge_constraint(c, labels) for c in pod.topology_spread_constraints)
    affinity = pod.affinity
    if affinity is not None:
        affinity = replace(
            affinity,
            pod_affinity_required=tuple(
                _merge_affinity_term(t, labels) for t in affinity.pod_affinity_required
            ),
            pod_affinity_preferred=tuple(
                _merge_weighted(t, labels) for t in affinity.pod_affinity_preferred
            ),
            pod_anti_affinity_required=tuple(
                _merge_affinity_term(t, labels) for t in affinity.pod_anti_affinity_required
            ),
            pod_anti_affinity_preferred=tuple(
                _merge_weighted(t, labels) for t in affinity.pod_anti_affinity_preferred
            ),
        )
    if constraints == pod.topology_spread_constraints and affinity == pod.affinity:
        return pod
    return replace(pod, topology_spread_constraints=constraints, affinity=affinity)


# -- objects -----------------------------------------------------------------------------------


def _validate_scheduling_gates(gates: Sequence[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, name in enumerate(gates):
        errs.extend(
            FieldError.invalid(_index(path, i), name, msg) for msg in is_qualified_name(name)
        )
        if name in seen:
            errs.append(FieldError.duplicate(_index(path, i), name))
        seen.add(name)
    return errs


def validate_pod(pod: Pod, *, create: bool = True) -> list[FieldError]:
    """Every problem the v1.37.1 API server would report for the scheduling fields of ``pod``.

    With ``create`` (the default) ``pod`` is taken as submitted — a manifest — and checked
    as ``POST`` checks it: :func:`merge_match_label_keys` is applied first and the merged
    pod is validated, so a ``matchLabelKeys`` key also present in the selector is caught
    exactly when upstream catches it. With ``create=False`` the pod is taken as already
    stored (read back from a cluster) and validated as it is, as an update of itself: an
    invalid label value in its required node affinity is kept (validation ratchets,
    kubernetes#128212), since the server holds and schedules such pods.

    Order: ``metadata.labels``; then the spec in ``ValidatePodSpec`` order (nodeSelector,
    affinity, schedulingGates, topologySpreadConstraints, nodeName, tolerations); then the
    create-only rule that ``nodeName`` needs cleared scheduling gates.
    """
    if create:
        pod = merge_match_label_keys(pod)
    errs = validate_labels(pod.metadata.labels, "metadata.labels")
    errs.extend(validate_labels(pod.node_selector, "spec.nodeSelector"))
    errs.extend(
        validate_affinity(pod.affinity, "spec.affinity", allow_invalid_label_value=not create)
    )
    errs.extend(_validate_scheduling_gates(pod.scheduling_gates, "spec.schedulingGates"))
    errs.extend(
        validate_topology_spread_constraints(
            pod.topology_spread_constraints, "spec.topologySpreadConstraints"
        )
    )
    if pod.node_name:
        errs.extend(
            FieldError.invalid("spec.nodeName", pod.node_name, msg)
            for msg in is_dns1123_subdomain(pod.node_name)
        )
    if pod.tolerations:
        errs.extend(validate_tolerations(pod.tolerations, "spec.tolerations"))
    if create and pod.node_name and pod.scheduling_gates:
        errs.append(
            FieldError.forbidden(
                "spec.nodeName", "cannot be set until all schedulingGates have been cleared"
            )
        )
    return errs


def validate_node(node: Node) -> list[FieldError]:
    """``ValidateNode`` for labels and taints.

    Taints are reported under ``metadata.taints`` — upstream builds that path from the
    metadata path (``ValidateNode`` in validation.go), so that is what users see.
    """
    errs = validate_labels(node.metadata.labels, "metadata.labels")
    if node.taints:
        errs.extend(validate_node_taints(node.taints, "metadata.taints"))
    return errs


def validate_service(service: Service) -> list[FieldError]:
    """``ValidateService`` for labels and ``spec.selector`` (a label map; empty is allowed)."""
    errs = validate_labels(service.metadata.labels, "metadata.labels")
    if service.selector is not None:
        errs.extend(validate_labels(service.selector, "spec.selector"))
    return errs


def validate_replication_controller(rc: ReplicationController) -> list[FieldError]:
    """``ValidateReplicationController`` for labels and ``spec.selector``, which must not be
    empty (``ValidateNonEmptySelector``; upstream checks no syntax of the selector there)."""
    errs = validate_labels(rc.metadata.labels, "metadata.labels")
    if not rc.selector:
        errs.append(FieldError.required("spec.selector"))
    return errs


def _validate_workload_selector(selector: LabelSelector | None, kind: str) -> list[FieldError]:
    # apps/v1 ValidateReplicaSetSpec / ValidateStatefulSetSpec: required, valid, non-empty.
    # The ReplicaSet message says "deployment": upstream shares it with Deployments.
    if selector is None:
        return [FieldError.required("spec.selector")]
    errs = validate_label_selector(selector, "spec.selector")
    if not selector.match_labels and not selector.match_expressions:
        errs.append(
            FieldError.invalid("spec.selector", {}, f"empty selector is invalid for {kind}")
        )
    return errs


def validate_replica_set(rs: ReplicaSet) -> list[FieldError]:
    """``ValidateReplicaSet`` for labels and ``spec.selector``."""
    errs = validate_labels(rs.metadata.labels, "metadata.labels")
    errs.extend(_validate_workload_selector(rs.selector, "deployment"))
    return errs


def validate_stateful_set(ss: StatefulSet) -> list[FieldError]:
    """``ValidateStatefulSet`` for labels, ``spec.selector`` and the claim templates."""
    errs = validate_labels(ss.metadata.labels, "metadata.labels")
    errs.extend(_validate_workload_selector(ss.selector, "statefulset"))
    errs.extend(_validate_stateful_set_claims(ss))
    return errs


def _validate_stateful_set_claims(ss: StatefulSet) -> list[FieldError]:
    # ValidateStatefulSetSpec: the retention policy's two values, then each template's spec
    # (validateVolumeClaimTemplates checks no template metadata).
    errs: list[FieldError] = []
    where = "spec.persistentVolumeClaimRetentionPolicy"
    for name, value in (
        ("whenDeleted", ss.claim_retention_when_deleted),
        ("whenScaled", ss.claim_retention_when_scaled),
    ):
        if value not in ("Retain", "Delete"):
            errs.append(FieldError.not_supported(_child(where, name), value, ["Retain", "Delete"]))
    for i, template in enumerate(ss.volume_claim_templates):
        errs.extend(
            validate_persistent_volume_claim_spec(
                template.spec, _child(_index("spec.volumeClaimTemplates", i), "spec")
            )
        )
    return errs


def validate_object(obj: KubeObject) -> list[FieldError]:
    """Dispatch to the validator of ``obj``'s kind; pods are validated as on create."""
    if isinstance(obj, Pod):
        return validate_pod(obj)
    if isinstance(obj, Node):
        return validate_node(obj)
    if isinstance(obj, Service):
        return validate_service(obj)
    if isinstance(obj, ReplicationController):
        return validate_replication_controller(obj)
    if isinstance(obj, ReplicaSet):
        return validate_replica_set(obj)
    if isinstance(obj, Namespace):
        # ValidateNamespace: of what the scheduler reads, only the labels.
        return validate_labels(obj.metadata.labels, "metadata.labels")
    if isinstance(obj, PodDisruptionBudget):
        return validate_pod_disruption_budget(obj)
    if isinstance(obj, PriorityClass):
        # Of a PriorityClass only its value and globalDefault are read; both are typed.
        return []
    if isinstance(obj, StatefulSet):
        return validate_stateful_set(obj)
    if isinstance(
        obj,
        PersistentVolume
        | PersistentVolumeClaim
        | StorageClass
        | CSINode
        | CSIDriver
        | CSIStorageCapacity
        | VolumeAttachment,
    ):
        return validate_storage_object(obj)
    # Other kinds (resource.k8s.io) are checked where they are decoded.
    return []


def validate_storage_object(
    obj: PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | VolumeAttachment,
) -> list[FieldError]:
    """Dispatch to the validator of a storage kind."""
    if isinstance(obj, PersistentVolume):
        return validate_persistent_volume(obj)
    if isinstance(obj, PersistentVolumeClaim):
        return validate_persistent_volume_claim(obj)
    if isinstance(obj, StorageClass):
        return validate_storage_class(obj)
    if isinstance(obj, CSINode):
        return validate_csi_node(obj)
    if isinstance(obj, CSIDriver):
        return validate_csi_driver(obj)
    if isinstance(obj, CSIStorageCapacity):
        return validate_csi_storage_capacity(obj)
    return validate_volume_attachment(obj)


# -- storage (core/v1 PersistentVolume(Claim), storage.k8s.io/v1) ------------------------------
#
# As ValidatePersistentVolume, ValidatePersistentVolumeClaim (pkg/apis/core/validation) and
# pkg/apis/storage/validation check on create, with the default feature gates of v1.37.1.
# Decoding already refused what needs the text as written: a PV capacity other than one
# positive storage quantity, a claim's storage request that is not positive, a PV
# nodeAffinity without required. Names are checked by validate_metadata (all DNS-1123
# subdomains); volume source contents (NFS server, local path...) are not checked.

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
"""``sets.List(supportedAccessModes)``: sorted."""
_VOLUME_MODES = ("Block", "Filesystem")
_VOLUME_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")


def _validate_access_modes(modes: Sequence[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    once_pod = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(FieldError.not_supported(path, mode, _ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in _ACCESS_MODES:
            other = True
    if once_pod and other:
        errs.append(
            FieldError.forbidden(path, "may not use ReadWriteOncePod with other access modes")
        )
    return errs


def _validate_class_name(name: str, path: str) -> list[FieldError]:
    # ValidateClassName: a DNS-1123 subdomain.
    return [FieldError.invalid(path, name, msg) for msg in is_dns1123_subdomain(name)]


def validate_persistent_volume_claim_spec(
    spec: PersistentVolumeClaimSpec, path: str
) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec``: access modes, selector, storage request,
    class name and volume mode (claims, ephemeral volume and StatefulSet templates)."""
    modes_path = _child(path, "accessModes")
    errs: list[FieldError] = []
    if not spec.access_modes:
        errs.append(FieldError.required(modes_path, "at least 1 access mode is required"))
    errs.extend(validate_label_selector(spec.selector, _child(path, "selector")))
    errs.extend(_validate_access_modes(spec.access_modes, modes_path))
    if spec.storage_request is None:
        errs.append(FieldError.required(_index(_child(path, "resources"), "storage")))
    if spec.storage_class_name:
        errs.extend(_validate_class_name(spec.storage_class_name, _child(path, "storageClassName")))
    if spec.volume_mode not in _VOLUME_MODES:
        errs.append(
            FieldError.not_supported(_child(path, "volumeMode"), spec.volume_mode, _VOLUME_MODES)
        )
    if spec.volume_attributes_class_name:
        errs.extend(
            _validate_class_name(
                spec.volume_attributes_class_name, _child(path, "volumeAttributesClassName")
            )
        )
    return errs


def validate_claim_template(template: ClaimTemplate, path: str) -> list[FieldError]:
    """A claim template's labels and spec (``volumeClaimTemplates[i]``, an ephemeral
    volume's ``volumeClaimTemplate``)."""
    errs = validate_labels(template.metadata.labels, _child(path, "metadata.labels"))
    errs.extend(validate_persistent_volume_claim_spec(template.spec, _child(path, "spec")))
    return errs


def validate_persistent_volume_claim(claim: PersistentVolumeClaim) -> list[FieldError]:
    """``ValidatePersistentVolumeClaim`` on create, after the name."""
    errs = validate_labels(claim.metadata.labels, "metadata.labels")
    errs.extend(validate_persistent_volume_claim_spec(claim.spec, "spec"))
    return errs


def validate_persistent_volume(pv: PersistentVolume) -> list[FieldError]:
    """``ValidatePersistentVolume`` on create, after the name."""
    errs = validate_labels(pv.metadata.labels, "metadata.labels")
    if not pv.access_modes:
        errs.append(FieldError.required("spec.accessModes"))
    errs.extend(_validate_access_modes(pv.access_modes, "spec.accessModes"))
    if pv.capacity is None:
        errs.append(FieldError.required("spec.capacity"))
        errs.append(FieldError.not_supported("spec.capacity", None, ["storage"]))
    if pv.node_affinity is not None:
        errs.extend(validate_node_selector(pv.node_affinity, "spec.nodeAffinity.required"))
    for extra in pv.sources[1:]:
        errs.append(
            FieldError.forbidden(_child("spec", extra), "may not specify more than 1 volume type")
        )
    if pv.sources and pv.sources[0] == "local" and pv.node_affinity is None:
        errs.append(FieldError.required("spec.nodeAffinity", "Local volume requires node affinity"))
    if not pv.sources:
        errs.append(FieldError.required("spec", "must specify a volume type"))
    if pv.storage_class_name:
        errs.extend(_validate_class_name(pv.storage_class_name, "spec.storageClassName"))
    if pv.volume_mode not in _VOLUME_MODES:
        errs.append(FieldError.not_supported("spec.volumeMode", pv.volume_mode, _VOLUME_MODES))
    if pv.volume_attributes_class_name is not None:
        where = "spec.volumeAttributesClassName"
        if not pv.volume_attributes_class_name:
            errs.append(FieldError.required(where, "an empty string is disallowed"))
        else:
            errs.extend(_validate_class_name(pv.volume_attributes_class_name, where))
        if pv.csi is None:
            errs.append(
                FieldError.required(
                    "spec.csi", "has to be specified when using volumeAttributesClassName"
                )
            )
    return errs


def _validate_topology_term(term: TopologySelectorTerm, path: str) -> list[FieldError]:
    # ValidateTopologySelectorTerm: each requirement has values, none twice, a valid key;
    # no key twice.
    errs: list[FieldError] = []
    keys: set[str] = set()
    expressions = _child(path, "matchLabelExpressions")
    for i, (key, values) in enumerate(term.match_label_expressions):
        at = _index(expressions, i)
        values_path = _child(at, "values")
        if not values:
            errs.append(FieldError.required(values_path))
        seen: set[str] = set()
        for j, value in enumerate(values):
            if value in seen:
                errs.append(FieldError.duplicate(_index(values_path, j), value))
            seen.add(value)
        errs.extend(validate_label_name(key, _child(at, "key")))
        if key in keys:
            errs.append(FieldError.duplicate(_child(at, "key"), key))
        keys.add(key)
    return errs


def _topology_term_value(term: TopologySelectorTerm) -> dict[str, frozenset[str]]:
    return {key: frozenset(values) for key, values in term.match_label_expressions}


def validate_storage_class(sc: StorageClass) -> list[FieldError]:
    """``ValidateStorageClass`` on create, after the name."""
    errs = validate_labels(sc.metadata.labels, "metadata.labels")
    if not sc.provisioner:
        errs.append(FieldError.required("provisioner"))
    else:
        errs.extend(
            FieldError.invalid("provisioner", sc.provisioner.lower(), msg)
            for msg in is_qualified_name(sc.provisioner.lower())
        )
    if sc.volume_binding_mode not in _VOLUME_BINDING_MODES:
        errs.append(
            FieldError.not_supported(
                "volumeBindingMode", sc.volume_binding_mode, _VOLUME_BINDING_MODES
            )
        )
    earlier: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(sc.allowed_topologies):
        at = _index("allowedTopologies", i)
        errs.extend(_validate_topology_term(term, at))
        value = _topology_term_value(term)
        errs.extend(
            FieldError.duplicate(_child(at, "matchLabelExpressions"), "")
            for other in earlier
            if other == value
        )
        earlier.append(value)
    return errs


def _validate_csi_driver_name(name: str, path: str) -> list[FieldError]:
    # ValidateCSIDriverName.
    if not name:
        return [FieldError.required(path)]
    errs: list[FieldError] = []
    if len(name) > 63:
        errs.append(FieldError(ErrorType.TOO_LONG, path, detail="may not be more than 63 bytes"))
    errs.extend(FieldError.invalid(path, name, msg) for msg in is_dns1123_subdomain(name.lower()))
    return errs


def validate_csi_node(node: CSINode) -> list[FieldError]:
    """``ValidateCSINode`` on create, after the name: each driver's name, node ID,
    allocatable count and topology keys; no driver twice."""
    errs = validate_labels(node.metadata.labels, "metadata.labels")
    names: set[str] = set()
    for i, driver in enumerate(node.drivers):
        at = _index("spec.drivers", i)
        errs.extend(_validate_csi_driver_name(driver.name, _child(at, "name")))
        if not driver.node_id:
            errs.append(FieldError.required(_child(at, "nodeID")))
        if len(driver.node_id) > 256:
            errs.append(
                FieldError.invalid(
                    _child(at, "nodeID"), driver.node_id, "must be 256 characters or less"
                )
            )
        errs.extend(_nonnegative(driver.allocatable_count, _child(at, "allocatable.count")))
        if driver.name in names:
            errs.append(FieldError.duplicate(_child(at, "name"), driver.name))
        names.add(driver.name)
        keys: set[str] = set()
        for key in driver.topology_keys:
            if not key:
                errs.append(FieldError.required(at))
            if key in keys:
                errs.append(FieldError.duplicate(at, key))
            keys.add(key)
            errs.extend(FieldError.invalid(at, key, msg) for msg in is_qualified_name(key))
    return errs


def validate_csi_driver(driver: CSIDriver) -> list[FieldError]:
    """``ValidateCSIDriver`` on create, after the name: every field scheduling reads is
    defaulted or typed, so only the labels remain."""
    return validate_labels(driver.metadata.labels, "metadata.labels")


def validate_csi_storage_capacity(capacity: CSIStorageCapacity) -> list[FieldError]:
    """``ValidateCSIStorageCapacity`` on create, after the name: the node topology
    selector and the class name (required: an empty one is not a valid name)."""
    errs = validate_labels(capacity.metadata.labels, "metadata.labels")
    errs.extend(validate_label_selector(capacity.node_topology, "nodeTopology"))
    errs.extend(_validate_class_name(capacity.storage_class_name, "storageClassName"))
    return errs


def validate_volume_attachment(attachment: VolumeAttachment) -> list[FieldError]:
    """``ValidateVolumeAttachment`` on create, after the name: the attacher, exactly one
    source, the node name and the volume name."""
    errs = validate_labels(attachment.metadata.labels, "metadata.labels")
    errs.extend(_validate_csi_driver_name(attachment.attacher, "spec.attacher"))
    pv_name = attachment.persistent_volume_name
    exactly_one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if pv_name is None and not attachment.inline_volume_spec:
        errs.append(FieldError.required("spec.source", exactly_one))
    elif pv_name is not None and attachment.inline_volume_spec:
        errs.append(FieldError.forbidden("spec.source", exactly_one))
    elif pv_name == "":
        errs.append(
            FieldError.required(
                "spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"
            )
        )
    errs.extend(
        FieldError.invalid("spec.nodeName", attachment.node_name, msg)
        for msg in is_dns1123_subdomain(attachment.node_name)
    )
    if pv_name is not None:
        errs.extend(
            FieldError.invalid("spec.source.persistentVolumeName", pv_name, msg)
            for msg in is_dns1123_subdomain(pv_name)
        )
    return errs


# -- workload controllers (read by the simulator) ---------------------------------------------

_PERCENT_MESSAGE = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%' or '93%', regex used for validation is '[0-9]+%')"
)


def _prefixed(errors: Iterable[FieldError], prefix: str) -> list[FieldError]:
    return [FieldError(e.type, f"{prefix}.{e.field}", e.value, e.detail) for e in errors]


def _nonnegative(value: int | None, path: str) -> list[FieldError]:
    # ValidateNonnegativeField.
    if value is not None and value < 0:
        return [FieldError.invalid(path, value, "must be greater than or equal to 0")]
    return []


def _int_or_percent(value: int | str) -> tuple[int, bool] | None:
    # getIntOrPercentValue: (value, is_percent); None for a malformed percentage.
    if isinstance(value, int):
        return value, False
    if len(value) > 1 and value.endswith("%") and value[:-1].isdigit() and value[:-1].isascii():
        return int(value[:-1]), True
    return None


def validate_positive_int_or_percent(value: int | str, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent`` then ``IsNotMoreThan100Percent`` (apps validation)."""
    parsed = _int_or_percent(value)
    if parsed is None:
        return [FieldError.invalid(path, value, _PERCENT_MESSAGE)]
    number, percent = parsed
    if not percent:
        return _nonnegative(number, path)
    if number > 100:
        return [FieldError.invalid(path, value, "must not be greater than 100%")]
    return []


def _selector_matches(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    # metav1.LabelSelectorAsSelector(selector).Matches(labels), for a valid selector.
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    for e in selector.match_expressions:
        present = e.key in labels
        if e.operator == "In" and (not present or labels[e.key] not in e.values):
            return False
        if e.operator == "NotIn" and present and labels[e.key] in e.values:
            return False
        if e.operator == "Exists" and not present:
            return False
        if e.operator == "DoesNotExist" and present:
            return False
    return True


def validate_pod_template(
    template: Pod | None, selector: LabelSelector | None, path: str
) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet`` for what scheduling reads.

    The template is validated as a pod on create (:func:`validate_pod`, paths under
    ``<path>.``), and a valid selector must match the template's labels.
    """
    if template is None:
        return [FieldError.required(path)]
    errs: list[FieldError] = []
    if (
        selector is not None
        and not validate_label_selector(selector, "")
        and (selector.match_labels or selector.match_expressions)
        and not _selector_matches(selector, template.metadata.labels)
    ):
        errs.append(
            FieldError.invalid(
                _child(path, "metadata.labels"),
                dict(sorted(template.metadata.labels.items())),
                "`selector` does not match template `labels`",
            )
        )
    errs.extend(_prefixed(validate_pod(template), path))
    return errs


def validate_workload_spec(
    obj: ReplicaSet | StatefulSet | Deployment,
) -> list[FieldError]:
    """A controller as the simulator runs it: labels, selector, replicas, template, strategy.

    ``ValidateDeployment`` / ``ValidateReplicaSet`` / ``ValidateStatefulSet`` of
    ``pkg/apis/apps/validation`` for what the simulator reads.
    """
    kind = {ReplicaSet: "deployment", StatefulSet: "statefulset", Deployment: "deployment"}
    errs = validate_labels(obj.metadata.labels, "metadata.labels")
    errs.extend(_validate_workload_selector(obj.selector, kind[type(obj)]))
    errs.extend(_nonnegative(obj.replicas, "spec.replicas"))
    errs.extend(validate_pod_template(obj.template, obj.selector, "spec.template"))
    if isinstance(obj, StatefulSet):
        if obj.pod_management_policy not in ("OrderedReady", "Parallel"):
            errs.append(
                FieldError.not_supported(
                    "spec.podManagementPolicy",
                    obj.pod_management_policy,
                    ["OrderedReady", "Parallel"],
                )
            )
        if obj.update_strategy not in ("RollingUpdate", "OnDelete"):
            errs.append(
                FieldError.not_supported(
                    "spec.updateStrategy", obj.update_strategy, ["OnDelete", "RollingUpdate"]
                )
            )
        errs.extend(_validate_stateful_set_claims(obj))
    if isinstance(obj, Deployment):
        errs.extend(validate_deployment_strategy(obj.strategy, "spec.strategy"))
    return errs


def validate_deployment_strategy(strategy: DeploymentStrategy, path: str) -> list[FieldError]:
    """``ValidateDeploymentStrategy`` / ``ValidateRollingUpdateDeployment``."""
    if strategy.type == "Recreate":
        return []
    if strategy.type != "RollingUpdate":
        return [
            FieldError.not_supported(
                _child(path, "type"), strategy.type, ["Recreate", "RollingUpdate"]
            )
        ]
    rolling = _child(path, "rollingUpdate")
    unavailable_path = _child(rolling, "maxUnavailable")
    errs = validate_positive_int_or_percent(strategy.max_unavailable, unavailable_path)
    errs.extend(validate_positive_int_or_percent(strategy.max_surge, _child(rolling, "maxSurge")))
    unavailable = _int_or_percent(strategy.max_unavailable)
    surge = _int_or_percent(strategy.max_surge)
    if unavailable is not None and surge is not None and unavailable[0] == 0 and surge[0] == 0:
        errs.append(
            FieldError.invalid(
                unavailable_path, strategy.max_unavailable, "may not be 0 when `maxSurge` is 0"
            )
        )
    return errs


def validate_pod_disruption_budget(pdb: PodDisruptionBudget) -> list[FieldError]:
    """``ValidatePodDisruptionBudget`` (policy/v1) for what evictions read."""
    errs = validate_labels(pdb.metadata.labels, "metadata.labels")
    if pdb.min_available is not None and pdb.max_unavailable is not None:
        errs.append(
            FieldError.invalid(
                "spec",
                {"minAvailable": pdb.min_available, "maxUnavailable": pdb.max_unavailable},
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    if pdb.min_available is not None:
        errs.extend(validate_positive_int_or_percent(pdb.min_available, "spec.minAvailable"))
    if pdb.max_unavailable is not None:
        errs.extend(validate_positive_int_or_percent(pdb.max_unavailable, "spec.maxUnavailable"))
    errs.extend(validate_label_selector(pdb.selector, "spec.selector"))
    return errs


# -- strict field validation and required containers (manifests) ---------------------------

_POD_SPEC_PATHS: Final[Mapping[str, str]] = {
    "v1/Pod": "spec",
    "v1/PodTemplate": "template.spec",
    "v1/ReplicationController": "spec.template.spec",
    "apps/v1/Deployment": "spec.template.spec",
    "apps/v1/ReplicaSet": "spec.template.spec",
    "apps/v1/StatefulSet": "spec.template.spec",
    "apps/v1/DaemonSet": "spec.template.spec",
    "batch/v1/Job": "spec.template.spec",
    "batch/v1/CronJob": "spec.jobTemplate.spec.template.spec",
}


@dataclass(frozen=True, slots=True)
class StrictError:
    """A field the API server's strict decoding refuses (``fieldValidation=Strict``, kubectl's
    default), worded as ``strict decoding error: unknown field "spec.x"``."""

    field: str
    problem: str
    """``unknown field`` or ``duplicate field``."""

    def __str__(self) -> str:
        return f"strict decoding error: {self.problem} {go_quote(self.field)}"


def _unknown(value: Any, type_name: str, path: str, types: Mapping[str, Any]) -> Iterator[str]:
    fields = types.get(type_name)
    if fields is None or not isinstance(value, dict):
        return
    for name, item in value.items():
        here = _child(path, name)
        spec = fields.get(name)
        if spec is None:
            yield here
        elif not spec:
            continue
        elif spec[0] == "[":
            if isinstance(item, list):
                for index, element in enumerate(item):
                    yield from _unknown(element, spec[1:], _index(here, index), types)
        elif spec[0] == "{":
            if isinstance(item, dict):
                for key, element in item.items():
                    yield from _unknown(element, spec[1:], _child(here, key), types)
        else:
            yield from _unknown(item, spec, here, types)


def strict_field_errors(doc: Mapping[str, Any]) -> list[StrictError]:
    """The fields of one object (a parsed document) that strict decoding refuses.

    ``kubectl apply``/``create`` validate strictly by default: the API server decodes
    the body case-sensitively into the Go types and refuses a field they lack
    (``NodeAffinityPolicy`` for ``nodeAffinityPolicy``) rather than dropping it. Kinds
    not in the schema (custom resources) are not checked.
    """
    type_name = fieldschema.KINDS.get(f"{doc.get('apiVersion')}/{doc.get('kind')}")
    if type_name is None:
        return []
    return [
        StrictError(p, "unknown field") for p in _unknown(doc, type_name, "", fieldschema.TYPES)
    ]


def required_containers(doc: Mapping[str, Any]) -> list[FieldError]:
    """``spec.containers: Required value`` (at the kind's pod spec path) for an object
    whose pod spec has no containers, as ``validateContainers`` refuses it on create."""
    path = _POD_SPEC_PATHS.get(f"{doc.get('apiVersion')}/{doc.get('kind')}")
    if path is None:
        return []
    spec: Any = doc
    for part in path.split("."):
        spec = spec.get(part) if isinstance(spec, dict) else None
    if isinstance(spec, dict) and spec.get("containers"):
        return []
    return [FieldError.required(_child(path, "containers"))]
