"""``RatioSpreadArgs``: the plugin's ``pluginConfig`` args, decoded strictly.

.. code-block:: yaml

    pluginConfig:
    - name: RatioSpread
      args:
        policyLabel: ratio-spread.topospread.io/policy   # the default
        policies:
        - name: spot-80
          topologyKey: karpenter.sh/capacity-type
          ratios:
          - {value: spot, weight: 80}
          - {value: on-demand, weight: 20}
          maxSkew: 1                        # the default
          whenUnsatisfiable: DoNotSchedule  # the default; or ScheduleAnyway
          matchLabelKeys: [app]             # the default: none

A pod opts in with the label ``policyLabel: <policy name>``. Its group is the pods of its
namespace with the same label value and, for each of ``matchLabelKeys`` the pod has, the
same value of that label (as ``matchLabelKeys`` of a topology spread constraint).

The decoder follows kube-scheduler's args handling: unknown fields are refused as the
strict codec refuses them, wrong types and invalid values as ``field.Error`` s with the
path under ``args``, every problem at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.errors import FieldError
from topospread.framework.config.args import ArgsError, unknown_fields
from topospread.model.names import is_valid_label_value
from topospread.model.validation import validate_label_name

__all__ = [
    "DEFAULT_POLICY_LABEL",
    "DO_NOT_SCHEDULE",
    "SCHEDULE_ANYWAY",
    "Policy",
    "Ratio",
    "RatioSpreadArgs",
    "decode_args",
]

DEFAULT_POLICY_LABEL: Final = "ratio-spread.topospread.io/policy"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"

_FIELDS: Final = {
    "policyLabel": None,
    "policies": (
        {
            "name": None,
            "topologyKey": None,
            "ratios": ({"value": None, "weight": None},),
            "maxSkew": None,
            "whenUnsatisfiable": None,
            "matchLabelKeys": None,
        },
    ),
}
"""The JSON fields of ``RatioSpreadArgs``, for the strict decoding of unknown fields."""


@dataclass(frozen=True, slots=True)
class Ratio:
    """One value of the policy's node label and its weight."""

    value: str
    """The node label's value, e.g. ``spot``."""
    weight: int
    """Its share is ``weight`` over the sum of the policy's weights."""


@dataclass(frozen=True, slots=True)
class Policy:
    """One ratio policy, named by the pods that follow it."""

    name: str
    topology_key: str
    """The node label whose values the ratios are over."""
    ratios: tuple[Ratio, ...]
    max_skew: int = 1
    """How many pods a value may hold beyond its exact share once the pod is placed."""
    when_unsatisfiable: str = DO_NOT_SCHEDULE
    """``DoNotSchedule``: Filter refuses a value over its share (and nodes without one of
    the values); ``ScheduleAnyway``: only Score steers."""
    match_label_keys: tuple[str, ...] = ()

    @property
    def total_weight(self) -> int:
        """The sum of the weights: a value's share is its weight over this."""
        return sum(r.weight for r in self.ratios)

    def weight(self, value: str) -> int | None:
        """The weight of a node label value, None when the policy does not name it."""
        for ratio in self.ratios:
            if ratio.value == value:
                return ratio.weight
        return None


@dataclass(frozen=True, slots=True)
class RatioSpreadArgs:
    """The decoded, defaulted, validated args."""

    policies: tuple[Policy, ...]
    policy_label: str = DEFAULT_POLICY_LABEL

    def policy(self, name: str) -> Policy | None:
        """The policy of this name, if the args define one."""
        for policy in self.policies:
            if policy.name == name:
                return policy
        return None


class _Reader:
    """Typed reads of the args that record a problem instead of raising."""

    def __init__(self) -> None:
        self.type_errors: list[FieldError] = []
        """Values of the wrong JSON type: decoding stops at them, before validation."""
        self.errors: list[FieldError] = []
        """Validation's problems."""

    def _wrong(self, path: str, value: object, expected: str) -> None:
        got = type(value).__name__
        got = {"dict": "object", "list": "array", "str": "string", "bool": "boolean"}.get(
            got, "number" if isinstance(value, int | float) else got
        )
        shown = "object" if isinstance(value, dict) else value
        self.type_errors.append(FieldError.invalid(path, shown, f"expected {expected}, got {got}"))

    def string(self, data: Mapping[str, Any], key: str, path: str) -> str | None:
        value = data.get(key)
        if value is None or isinstance(value, str):
            return value
        self._wrong(path, value, "string")
        return None

    def integer(self, data: Mapping[str, Any], key: str, path: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self._wrong(path, value, "int32")
            return None
        if not -(2**31) <= value < 2**31:
            self.type_errors.append(FieldError.invalid(path, value, "out of range for int32"))
            return None
        return value

    def array(self, data: Mapping[str, Any], key: str, path: str) -> Sequence[Any]:
        value = data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self._wrong(path, value, "array")
            return ()
        return value

    def objects(self, data: Mapping[str, Any], key: str, path: str) -> list[Mapping[str, Any]]:
        found: list[Mapping[str, Any]] = []
        for index, item in enumerate(self.array(data, key, path)):
            if isinstance(item, dict):
                found.append(item)
            else:
                self._wrong(f"{path}[{index}]", item, "object")
                found.append({})
        return found

    def strings(self, data: Mapping[str, Any], key: str, path: str) -> list[str]:
        found = []
        for index, item in enumerate(self.array(data, key, path)):
            if isinstance(item, str):
                found.append(item)
            else:
                self._wrong(f"{path}[{index}]", item, "string")
        return found


def _ratios(r: _Reader, data: Mapping[str, Any], path: str) -> tuple[Ratio, ...]:
    ratios: list[Ratio] = []
    items = r.objects(data, "ratios", f"{path}.ratios")
    if not items:
        r.errors.append(FieldError.required(f"{path}.ratios", "at least one value"))
    seen: set[str] = set()
    for j, item in enumerate(items):
        where = f"{path}.ratios[{j}]"
        value = r.string(item, "value", f"{where}.value")
        weight = r.integer(item, "weight", f"{where}.weight")
        if value is None:
            r.errors.append(FieldError.required(f"{where}.value"))
            value = ""
        else:
            r.errors.extend(
                FieldError.invalid(f"{where}.value", value, msg)
                for msg in is_valid_label_value(value)
            )
            if value in seen:
                r.errors.append(FieldError.duplicate(f"{where}.value", value))
            seen.add(value)
        if weight is None:
            r.errors.append(FieldError.required(f"{where}.weight"))
            weight = 0
        elif weight <= 0:
            r.errors.append(FieldError.invalid(f"{where}.weight", weight, "must be greater than 0"))
        ratios.append(Ratio(value, weight))
    return tuple(ratios)


def _policy(r: _Reader, data: Mapping[str, Any], path: str, seen: set[str]) -> Policy:
    name = r.string(data, "name", f"{path}.name")
    if not name:
        r.errors.append(FieldError.required(f"{path}.name"))
        name = ""
    else:
        # Pods name their policy in a label value, so the name must be one.
        r.errors.extend(
            FieldError.invalid(f"{path}.name", name, msg) for msg in is_valid_label_value(name)
        )
        if name in seen:
            r.errors.append(FieldError.duplicate(f"{path}.name", name))
        seen.add(name)
    key = r.string(data, "topologyKey", f"{path}.topologyKey")
    if not key:
        r.errors.append(FieldError.required(f"{path}.topologyKey", "can not be empty"))
        key = ""
    else:
        r.errors.extend(validate_label_name(key, f"{path}.topologyKey"))
    max_skew = r.integer(data, "maxSkew", f"{path}.maxSkew")
    if max_skew is None:
        max_skew = 1
    elif max_skew <= 0:
        r.errors.append(
            FieldError.invalid(f"{path}.maxSkew", max_skew, "must be greater than zero")
        )
    when = r.string(data, "whenUnsatisfiable", f"{path}.whenUnsatisfiable") or DO_NOT_SCHEDULE
    if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        r.errors.append(
            FieldError.not_supported(
                f"{path}.whenUnsatisfiable", when, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
            )
        )
    keys = r.strings(data, "matchLabelKeys", f"{path}.matchLabelKeys")
    for k, label in enumerate(keys):
        r.errors.extend(validate_label_name(label, f"{path}.matchLabelKeys[{k}]"))
        if label in keys[:k]:
            r.errors.append(FieldError.duplicate(f"{path}.matchLabelKeys[{k}]", label))
    return Policy(
        name=name,
        topology_key=key,
        ratios=_ratios(r, data, path),
        max_skew=max_skew,
        when_unsatisfiable=when,
        match_label_keys=tuple(keys),
    )


def decode_args(args: Mapping[str, Any]) -> RatioSpreadArgs:
    """Decode, default and validate ``RatioSpreadArgs``; raises
    :class:`~topospread.framework.config.args.ArgsError` with every problem."""
    unknown = unknown_fields(args, _FIELDS)
    if unknown:
        # The strict codec stops at unknown fields, before any value is looked at.
        raise ArgsError(unknown=unknown)
    r = _Reader()
    policy_label = r.string(args, "policyLabel", "policyLabel") or DEFAULT_POLICY_LABEL
    r.errors.extend(validate_label_name(policy_label, "policyLabel"))
    items = r.objects(args, "policies", "policies")
    if not items:
        r.errors.append(FieldError.required("policies", "at least one ratio policy"))
    seen: set[str] = set()
    policies = tuple(_policy(r, item, f"policies[{i}]", seen) for i, item in enumerate(items))
    # As kube-scheduler: a value of the wrong type fails decoding, and nothing is validated.
    if r.type_errors or r.errors:
        raise ArgsError(errors=r.type_errors or r.errors)
    return RatioSpreadArgs(policies=policies, policy_label=policy_label)
