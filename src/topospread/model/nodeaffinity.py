"""Node selector and node affinity matching.

Mirrors ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``.

Rules kept from upstream v1.37.1:

* A NodeSelector is the OR of its terms; a term with neither ``matchExpressions`` nor
  ``matchFields`` selects nothing and is dropped at parse time.
* A term is the AND of its label expressions (In, NotIn, Exists, DoesNotExist, Gt, Lt)
  and its field expressions (only ``In``/``NotIn`` with exactly one value; the only node
  field is ``metadata.name``, and only when the node has a name).
* Parsing checks what ``labels.NewRequirement`` checks: label keys and values must be
  valid, In/NotIn need values, Exists/DoesNotExist need none, Gt/Lt need one integer.
  A term that fails to parse never matches. The *lazy* selector (pod affinity) reports
  such errors only when no other term matched; the strict :class:`NodeSelector`
  (scheduler-enforced ``addedAffinity``) refuses to build at all.
* ``spec.nodeSelector`` is an equality selector ANDed with the required affinity.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.errors import FieldError
from topospread.model.labels import Operator, Requirement, Selector, parse_int64, selector_from_set
from topospread.model.names import is_label_key, is_valid_label_value
from topospread.model.objects import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)

__all__ = [
    "OBJECT_NAME_FIELD",
    "LazyErrorNodeSelector",
    "NodeSelectorMatcher",
    "NodeSelectorParseError",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "label_key_errors",
    "label_value_errors",
    "match_node_selector_terms",
    "node_selection_key",
    "node_selector",
    "preferred_scheduling_terms",
    "required_node_affinity",
]

OBJECT_NAME_FIELD: Final = "metadata.name"
"""The one node field selectors can use (``metav1.ObjectNameField``)."""

_LABEL_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}
_FIELD_OPERATORS: Final = ("In", "NotIn")


def label_key_errors(key: str) -> list[str]:
    """Why ``key`` is not a valid label key (``content.IsLabelKey``); empty when it is."""
    return is_label_key(key)


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a valid label value (``content.IsLabelValue``); empty when it is."""
    return is_valid_label_value(value)


class NodeSelectorParseError(ValueError):
    """A node selector that does not parse; the message aggregates every field error.

    Like ``errors.NewAggregate``: one error prints as itself, several as ``[e1, e2]``.
    """

    def __init__(self, errors: Sequence[FieldError]) -> None:
        self.errors = tuple(errors)
        text = [str(e) for e in self.errors]
        super().__init__(text[0] if len(text) == 1 else "[" + ", ".join(text) + "]")


def _label_requirements(
    expressions: Sequence[NodeSelectorRequirement], path: str
) -> tuple[tuple[Requirement, ...], list[FieldError]]:
    """``nodeSelectorRequirementsAsSelector``: label expressions as sorted requirements."""
    errors: list[FieldError] = []
    requirements: list[Requirement] = []
    for i, expr in enumerate(expressions):
        p = f"{path}[{i}]"
        op = _LABEL_OPERATORS.get(expr.operator)
        if op is None:
            errors.append(
                FieldError.not_supported(f"{p}.operator", expr.operator, tuple(_LABEL_OPERATORS))
            )
            continue
        found = _requirement_errors(expr.key, op, expr.values, p)
        if found:
            errors.extend(found)
        else:
            requirements.append(Requirement(expr.key, op, frozenset(expr.values)))
    requirements.sort(key=lambda r: r.key)
    return tuple(requirements), errors


def _requirement_errors(
    key: str, op: Operator, values: Sequence[str], path: str
) -> list[FieldError]:
    """The checks of ``labels.NewRequirement`` for the node selector operators."""
    errors: list[FieldError] = []
    key_errors = label_key_errors(key)
    if key_errors:
        errors.append(FieldError.invalid(f"{path}.key", key, "; ".join(key_errors)))
    values_path = f"{path}.values"
    if op in (Operator.IN, Operator.NOT_IN):
        if not values:
            errors.append(
                FieldError.invalid(
                    values_path,
                    list(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if values:
            errors.append(
                FieldError.invalid(
                    values_path,
                    list(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    else:
        if len(values) != 1:
            errors.append(
                FieldError.invalid(
                    values_path,
                    list(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, value in enumerate(values):
            if parse_int64(value) is None:
                errors.append(
                    FieldError.invalid(
                        f"{values_path}[{i}]",
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, value in enumerate(values):
        value_errors = label_value_errors(value)
        if value_errors:
            errors.append(
                FieldError.invalid(f"{values_path}[{i}][{key}]", value, "; ".join(value_errors))
            )
    return errors


@dataclass(frozen=True, slots=True)
class _FieldRequirement:
    """``fields.OneTermEqualSelector`` (``equal``) or ``OneTermNotEqualSelector``."""

    key: str
    value: str
    equal: bool


def _field_requirements(
    expressions: Sequence[NodeSelectorRequirement], path: str
) -> tuple[tuple[_FieldRequirement, ...], list[FieldError]]:
    """``nodeSelectorRequirementsAsFieldSelector``: In/NotIn with exactly one value."""
    errors: list[FieldError] = []
    requirements: list[_FieldRequirement] = []
    for i, expr in enumerate(expressions):
        p = f"{path}[{i}]"
        if expr.operator in _FIELD_OPERATORS:
            if len(expr.values) != 1:
                errors.append(
                    FieldError.invalid(f"{p}.values", list(expr.values), "must have one element")
                )
            else:
                requirements.append(
                    _FieldRequirement(expr.key, expr.values[0], expr.operator == "In")
                )
        else:
            errors.append(
                FieldError.not_supported(f"{p}.operator", expr.operator, _FIELD_OPERATORS)
            )
    return tuple(requirements), errors


@dataclass(frozen=True, slots=True)
class _Term:
    """A parsed, non-empty NodeSelectorTerm."""

    labels: Selector | None
    """``None`` when the term has no label expressions (not checked)."""
    fields: tuple[_FieldRequirement, ...] | None
    """``None`` when the term has no field expressions (not checked)."""
    errors: tuple[FieldError, ...]

    @classmethod
    def parse(cls, term: NodeSelectorTerm, path: str) -> _Term:
        errors: list[FieldError] = []
        labels: Selector | None = None
        fields: tuple[_FieldRequirement, ...] | None = None
        if term.match_expressions:
            reqs, errs = _label_requirements(term.match_expressions, f"{path}.matchExpressions")
            errors.extend(errs)
            labels = Selector(reqs)
        if term.match_fields:
            freqs, errs = _field_requirements(term.match_fields, f"{path}.matchFields")
            errors.extend(errs)
            fields = freqs
        return cls(labels, fields, tuple(errors))

    def match(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether a node with these labels and name satisfies the (error-free) term."""
        if self.labels is not None and not self.labels.matches(labels):
            return False
        # An unnamed node has no fields; upstream then skips the field selector entirely.
        if self.fields is not None and node_name:
            for req in self.fields:
                value = node_name if req.key == OBJECT_NAME_FIELD else ""
                if (value == req.value) != req.equal:
                    return False
        return True


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


@dataclass(frozen=True, slots=True)
class LazyErrorNodeSelector:
    """A NodeSelector whose parse errors surface only when no term matched.

    Terms that fail to parse never match; the others are still evaluated.
    """

    terms: tuple[_Term, ...]

    @classmethod
    def parse(cls, selector: NodeSelector, path: str = "") -> LazyErrorNodeSelector:
        """Parse every non-empty term (``NewLazyErrorNodeSelector``).

        ``path`` prefixes error field paths, like ``field.WithPath``.
        """
        terms_path = _child(path, "nodeSelectorTerms")
        return cls(
            tuple(
                _Term.parse(term, f"{terms_path}[{i}]")
                for i, term in enumerate(selector.node_selector_terms)
                if not _is_empty_term(term)
            )
        )

    def match_with_error(self, node: Node) -> tuple[bool, NodeSelectorParseError | None]:
        """``(matched, error)``; the error aggregates parse errors and is set only on no match."""
        labels = node.metadata.labels
        name = node.metadata.name
        errors: list[FieldError] = []
        for term in self.terms:
            if term.errors:
                errors.extend(term.errors)
                continue
            if term.match(labels, name):
                return True, None
        return False, NodeSelectorParseError(errors) if errors else None

    def match(self, node: Node) -> bool:
        """Whether any term matches; unparsable terms count as not matching."""
        labels = node.metadata.labels
        name = node.metadata.name
        return any(not term.errors and term.match(labels, name) for term in self.terms)


@dataclass(frozen=True, slots=True)
class NodeSelectorMatcher:
    """A NodeSelector known to parse (``nodeaffinity.NodeSelector``).

    Build it with :func:`node_selector`.
    """

    lazy: LazyErrorNodeSelector

    def match(self, node: Node) -> bool:
        """Whether any term matches the node's labels and name."""
        return self.lazy.match(node)


def node_selector(selector: NodeSelector, path: str = "") -> NodeSelectorMatcher:
    """Parse a NodeSelector strictly (``NewNodeSelector``).

    Raises :class:`NodeSelectorParseError` if any term fails to parse.
    """
    lazy = LazyErrorNodeSelector.parse(selector, path)
    errors = [e for term in lazy.terms for e in term.errors]
    if errors:
        raise NodeSelectorParseError(errors)
    return NodeSelectorMatcher(lazy)


def match_node_selector_terms(
    node: Node, selector: NodeSelector
) -> tuple[bool, NodeSelectorParseError | None]:
    """``corev1.MatchNodeSelectorTerms``: lazy parse, then match."""
    return LazyErrorNodeSelector.parse(selector).match_with_error(node)


@dataclass(frozen=True, slots=True)
class _WeightedTerm:
    term: _Term
    weight: int


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerms:
    """Parsed preferred node affinity terms; :meth:`score` sums the weights of matching terms."""

    terms: tuple[_WeightedTerm, ...]

    def score(self, node: Node) -> int:
        """The sum of the weights of the terms that match the node."""
        labels = node.metadata.labels
        name = node.metadata.name
        return sum(t.weight for t in self.terms if t.term.match(labels, name))


def preferred_scheduling_terms(
    terms: Sequence[PreferredSchedulingTerm],
    path: str = "",
) -> PreferredSchedulingTerms:
    """Parse preferred terms (``NewPreferredSchedulingTerms``).

    Raises :class:`NodeSelectorParseError` listing every term that fails to parse.

    Terms with weight 0 or with no expressions and no fields are skipped unparsed.
    Error paths are ``[i].matchExpressions[j]...`` relative to the list, as upstream.
    """
    errors: list[FieldError] = []
    parsed: list[_WeightedTerm] = []
    for i, term in enumerate(terms):
        if term.weight == 0 or _is_empty_term(term.preference):
            continue
        one = _Term.parse(term.preference, f"{path}[{i}]")
        if one.errors:
            errors.extend(one.errors)
        else:
            parsed.append(_WeightedTerm(one, term.weight))
    if errors:
        raise NodeSelectorParseError(errors)
    return PreferredSchedulingTerms(tuple(parsed))


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """A pod's ``spec.nodeSelector`` AND its required node affinity, parsed once.

    Build with :func:`required_node_affinity`; either part may be absent.
    """

    label_selector: Selector | None
    """``None`` when the pod has no nodeSelector."""
    node_selector: LazyErrorNodeSelector | None
    """``None`` when the pod has no ``requiredDuringSchedulingIgnoredDuringExecution``."""

    def match_with_error(self, node: Node) -> tuple[bool, NodeSelectorParseError | None]:
        """``RequiredNodeAffinity.Match``: the verdict plus any parse error of the affinity."""
        if self.label_selector is not None and not self.label_selector.matches(
            node.metadata.labels
        ):
            return False, None
        if self.node_selector is not None:
            return self.node_selector.match_with_error(node)
        return True, None

    def match(self, node: Node) -> bool:
        """Whether the node satisfies both parts; parse errors count as no match."""
        if self.label_selector is not None and not self.label_selector.matches(
            node.metadata.labels
        ):
            return False
        return self.node_selector is None or self.node_selector.match(node)


_CACHE_SIZE: Final = 4096
_cache: OrderedDict[int, tuple[Pod, RequiredNodeAffinity]] = OrderedDict()


def _build_required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    label_selector = selector_from_set(pod.node_selector) if pod.node_selector else None
    lazy: LazyErrorNodeSelector | None = None
    affinity = pod.affinity
    if affinity is not None and affinity.node_affinity is not None:
        required = affinity.node_affinity.required
        if required is not None:
            lazy = LazyErrorNodeSelector.parse(required)
    return RequiredNodeAffinity(label_selector, lazy)


def required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    """The parsed required node affinity of ``pod`` (``GetRequiredNodeAffinity``).

    Results are memoised per pod object (by identity, holding the pod so the id stays
    unique) in a small LRU, because callers evaluate it for every node.
    """
    key = id(pod)
    hit = _cache.get(key)
    if hit is not None and hit[0] is pod:
        _cache.move_to_end(key)
        return hit[1]
    result = _build_required_node_affinity(pod)
    _cache[key] = (pod, result)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return result


def node_selection_key(pod: Pod) -> tuple[object, ...]:
    """What of the pod decides which nodes it may select: its nodeSelector and node
    affinity, as a hashable value (a memo key for per-node answers)."""
    affinity = pod.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    return (tuple(sorted(pod.node_selector.items())), node_affinity)
