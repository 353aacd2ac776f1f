"""PriorityClass (``scheduling.k8s.io/v1``) and the Priority admission plugin's resolution.

A pod names a PriorityClass in ``spec.priorityClassName``; on create the API server's
Priority admission plugin (``plugin/pkg/admission/priority``, v1.37.1) writes the class's
value into ``spec.priority`` and its ``preemptionPolicy`` (defaulted to
``PreemptLowerPriority`` by ``SetDefaults_PriorityClass``) into ``spec.preemptionPolicy``.
A pod without a class name gets the global default class — of several, the one with the
lowest value — or priority 0 and ``PreemptLowerPriority``. A name that no class has is
refused ("no PriorityClass with name X was found"), as is a pod whose own
``spec.priority`` or ``spec.preemptionPolicy`` differs from what its class gives. Every
API server also has the two system classes (``system-node-critical`` 2000001000,
``system-cluster-critical`` 2000000000), which the inputs need not list.

Only a pod that has not been through an API server (no uid) is resolved; a stored pod
keeps what the API server resolved when it was created.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from topospread.errors import DecodeError, FieldError, InputError
from topospread.model.objects import PREEMPT_LOWER_PRIORITY, ObjectMeta, Pod, PriorityClass

__all__ = [
    "API_VERSION",
    "KIND",
    "SYSTEM_PRIORITY_CLASSES",
    "PriorityClass",
    "decode_priority_class",
    "resolve_priority",
]

API_VERSION: Final = "scheduling.k8s.io/v1"
KIND: Final = "PriorityClass"
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


SYSTEM_PRIORITY_CLASSES: Final = (
    PriorityClass(ObjectMeta(name="system-node-critical"), 2000001000),
    PriorityClass(ObjectMeta(name="system-cluster-critical"), 2000000000),
)
"""The classes every API server creates at start-up (``SystemPriorityClasses``)."""


def decode_priority_class(doc: Mapping[str, Any], source: str = "") -> PriorityClass:
    """Decode a PriorityClass, defaulting ``preemptionPolicy``; DecodeError on bad types."""
    errors: list[FieldError] = []
    meta = doc.get("metadata") or {}
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    if not isinstance(name, str):
        errors.append(FieldError.invalid("metadata.name", name, "expected a string"))
        name = ""
    value = doc.get("value", 0)
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not _INT32_MIN <= value <= _INT32_MAX
    ):
        errors.append(FieldError.invalid("value", value, "expected a 32-bit integer"))
        value = 0
    global_default = doc.get("globalDefault", False)
    if not isinstance(global_default, bool):
        errors.append(FieldError.invalid("globalDefault", global_default, "expected a boolean"))
        global_default = False
    policy = doc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY
    if not isinstance(policy, str):
        errors.append(FieldError.invalid("preemptionPolicy", policy, "expected a string"))
        policy = PREEMPT_LOWER_PRIORITY
    if errors:
        raise DecodeError(source, errors)
    return PriorityClass(ObjectMeta(name=name), value, global_default, policy)


def resolve_priority(pod: Pod, classes: Sequence[PriorityClass]) -> Pod:
    """The Priority admission plugin's create-time resolution (see the module docstring).

    Raises :class:`InputError` with the API server's words when it would refuse the pod.
    """
    if pod.metadata.uid:
        return pod
    known = {c.name: c for c in SYSTEM_PRIORITY_CLASSES}
    known.update((c.name, c) for c in classes)
    name = pod.priority_class_name
    if name:
        chosen = known.get(name)
        if chosen is None:
            raise _forbidden(pod, f"no PriorityClass with name {name} was found")
        value, policy = chosen.value, chosen.preemption_policy
    else:
        default: PriorityClass | None = None
        for candidate in classes:
            # getDefaultPriorityClass: of several global defaults, the lowest value.
            if candidate.global_default and (default is None or default.value > candidate.value):
                default = candidate
        if default is None:
            value, policy = 0, PREEMPT_LOWER_PRIORITY
        else:
            name, value, policy = default.name, default.value, default.preemption_policy
    if pod.priority is not None and pod.priority != value:
        raise _forbidden(
            pod,
            f"the integer value of priority ({pod.priority}) must not be provided in pod "
            f"spec; priority admission controller computed {value} from the given "
            "PriorityClass name",
        )
    if pod.preemption_policy is not None and pod.preemption_policy != policy:
        raise _forbidden(
            pod,
            f"the string value of PreemptionPolicy ({pod.preemption_policy}) must not be "
            f"provided in pod spec; priority admission controller computed {policy} from "
            "the given PriorityClass name",
        )
    return replace(pod, priority=value, priority_class_name=name, preemption_policy=policy)


def _forbidden(pod: Pod, why: str) -> InputError:
    return InputError("", message=f'pods "{pod.name}" is forbidden: {why}')
