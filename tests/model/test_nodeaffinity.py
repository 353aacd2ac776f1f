"""Node selector and required/preferred node affinity matching.

Cases follow k8s.io/component-helpers scheduling/corev1/nodeaffinity/nodeaffinity_test.go
(v0.37.1): TestNodeSelectorMatch, TestPreferredSchedulingTermsScore,
TestNodeSelectorRequirementsAsSelector and TestPodMatchesNodeSelectorAndAffinityTerms.
"""

from __future__ import annotations

import pytest

from topospread.model.nodeaffinity import (
    LazyErrorNodeSelector,
    NodeSelectorParseError,
    label_key_errors,
    match_node_selector_terms,
    node_selector,
    preferred_scheduling_terms,
    required_node_affinity,
)
from topospread.model.objects import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PreferredSchedulingTerm,
)

NAME = "metadata.name"


def expr(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, op, tuple(values))


def term(*exprs: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()):
    return NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=fields)


def selector(*terms: NodeSelectorTerm) -> NodeSelector:
    return NodeSelector(tuple(terms))


def node(name: str = "", **labels: str) -> Node:
    return Node(ObjectMeta(name=name, labels=dict(labels)))


def pod(
    node_selector: dict[str, str] | None = None,
    required: NodeSelector | None = None,
    *,
    affinity: bool = True,
) -> Pod:
    aff = Affinity(node_affinity=NodeAffinity(required=required)) if affinity else None
    return Pod(ObjectMeta("p", "default"), node_selector=node_selector or {}, affinity=aff)


IN_BAR = term(expr("foo", "In", "bar", "value2"))


@pytest.mark.parametrize(
    ("the_pod", "the_node", "want"),
    [
        pytest.param(pod(affinity=False), node(), True, id="a pod without selector fits"),
        pytest.param(pod({"foo": "bar"}), node(), False, id="a nodeSelector needs the label"),
        pytest.param(pod({"foo": "bar"}), node(foo="bar"), True, id="equal labels match"),
        pytest.param(
            pod({"foo": "bar"}),
            node(foo="bar", baz="blah"),
            True,
            id="node labels may be a superset",
        ),
        pytest.param(
            pod({"foo": "bar", "baz": "blah"}),
            node(foo="bar"),
            False,
            id="node labels may not be a subset",
        ),
        pytest.param(
            pod(required=selector(IN_BAR)), node(foo="bar"), True, id="In matches a listed value"
        ),
        pytest.param(
            pod(required=selector(term(expr("kernel-version", "Gt", "0204")))),
            node(**{"kernel-version": "0206"}),
            True,
            id="Gt compares integers with leading zeros",
        ),
        pytest.param(
            pod(required=selector(term(expr("mem-type", "NotIn", "DDR", "DDR2")))),
            node(**{"mem-type": "DDR3"}),
            True,
            id="NotIn matches another value",
        ),
        pytest.param(
            pod(required=selector(term(expr("GPU", "Exists")))),
            node(GPU="NVIDIA-GRID-K1"),
            True,
            id="Exists matches any value",
        ),
        pytest.param(
            pod(required=selector(term(expr("foo", "In", "value1", "value2")))),
            node(foo="bar"),
            False,
            id="In rejects an unlisted value",
        ),
        pytest.param(
            pod(required=selector()),
            node(foo="bar"),
            False,
            id="a required selector without terms matches nothing",
        ),
        pytest.param(
            pod(required=selector(term())),
            node(foo="bar"),
            False,
            id="an empty term matches nothing",
        ),
        pytest.param(pod(), node(foo="bar"), True, id="node affinity without required fits"),
        pytest.param(
            pod(
                required=selector(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))
            ),
            node(GPU="NVIDIA-GRID-K1"),
            True,
            id="expressions of a term are ANDed",
        ),
        pytest.param(
            pod(required=selector(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
            node(GPU="NVIDIA-GRID-K1"),
            False,
            id="one failing expression fails the term",
        ),
        pytest.param(
            pod(required=selector(IN_BAR, term(expr("diffkey", "In", "wrong", "value2")))),
            node(foo="bar"),
            True,
            id="terms are ORed",
        ),
        pytest.param(
            pod({"foo": "bar"}, selector(term(expr("foo", "Exists")))),
            node(foo="bar"),
            True,
            id="nodeSelector and affinity both satisfied",
        ),
        pytest.param(
            pod({"foo": "bar"}, selector(term(expr("foo", "Exists")))),
            node(foo="barrrrrr"),
            False,
            id="affinity satisfied but nodeSelector not",
        ),
        pytest.param(
            pod(required=selector(term(expr("foo", "NotIn", "invalid value: ___@#$%^")))),
            node(foo="bar"),
            False,
            id="an invalid label value never matches",
        ),
        pytest.param(
            pod(required=selector(term(fields=(expr(NAME, "In", "node_1"),)))),
            node("node_1"),
            True,
            id="matchFields In matches the node name",
        ),
        pytest.param(
            pod(required=selector(term(fields=(expr(NAME, "In", "node_1"),)))),
            node("node_2"),
            False,
            id="matchFields In rejects another node",
        ),
        pytest.param(
            pod(
                required=selector(
                    term(fields=(expr(NAME, "In", "node_1"),)),
                    term(expr("foo", "In", "bar")),
                )
            ),
            node("node_2", foo="bar"),
            True,
            id="a second term with labels can match",
        ),
        pytest.param(
            pod(
                required=selector(
                    term(expr("foo", "In", "bar"), fields=(expr(NAME, "In", "node_1"),))
                )
            ),
            node("node_2", foo="bar"),
            False,
            id="fields and labels of one term are ANDed",
        ),
        pytest.param(
            pod(
                required=selector(
                    term(expr("foo", "In", "bar"), fields=(expr(NAME, "In", "node_1"),))
                )
            ),
            node("node_1", foo="bar"),
            True,
            id="one term with fields and labels both matching",
        ),
        pytest.param(
            pod(required=selector(term(fields=(expr(NAME, "NotIn", "node_1"),)))),
            node("node_2"),
            True,
            id="matchFields NotIn matches other nodes",
        ),
        pytest.param(
            pod(required=selector(term(fields=(expr(NAME, "In", "node_1"),)))),
            node(""),
            True,
            id="an unnamed node skips field selectors",
        ),
        pytest.param(
            pod(required=selector(term(fields=(expr("metadata.uid", "In", "x"),)))),
            node("node_1"),
            False,
            id="another field reads as empty",
        ),
        pytest.param(
            pod(required=selector(term(expr("foo", "Lt", "x")), IN_BAR)),
            node(foo="bar"),
            True,
            id="an unparsable term does not stop another from matching",
        ),
    ],
)
def test_required_node_affinity_match(the_pod: Pod, the_node: Node, want: bool) -> None:
    assert required_node_affinity(the_pod).match(the_node) is want
    assert required_node_affinity(the_pod).match_with_error(the_node)[0] is want


def test_required_node_affinity_is_memoised_per_pod() -> None:
    p = pod({"a": "b"})
    assert required_node_affinity(p) is required_node_affinity(p)


INVALID_SELECTOR = selector(
    term(fields=(expr(NAME, "In", "host_1", "host_2"),)),
    term(expr("label_1", "In", "label_1_val"), fields=(expr(NAME, "In", "host_1"),)),
    term(expr("invalid key", "In", "label_value")),
)


def test_strict_selector_reports_every_parse_error() -> None:
    with pytest.raises(NodeSelectorParseError) as info:
        node_selector(INVALID_SELECTOR)
    assert str(info.value) == (
        '[nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["host_1","host_2"]: '
        "must have one element, nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: "
        "\"invalid key\": name part must consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',"
        "  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]"
    )


def test_lazy_selector_reports_errors_only_without_a_match() -> None:
    lazy = LazyErrorNodeSelector.parse(INVALID_SELECTOR)
    matched, error = lazy.match_with_error(node("host_1", label_1="label_1_val"))
    assert (matched, error) == (True, None)
    matched, error = lazy.match_with_error(node("host_2"))
    assert not matched
    assert error is not None
    assert len(error.errors) == 2


@pytest.mark.parametrize(
    ("sel", "the_node", "want"),
    [
        pytest.param(
            selector(
                term(expr("label_1", "In", "label_1_val"), fields=(expr(NAME, "In", "host_1"),))
            ),
            node("host_1", label_2="label_2_val"),
            False,
            id="node matches field selector but not labels",
        ),
        pytest.param(
            selector(
                term(expr("label_1", "In", "label_1_val"), fields=(expr(NAME, "In", "host_1"),))
            ),
            node("host_1", label_1="label_1_val"),
            True,
            id="node matches field selector and label selector",
        ),
        pytest.param(
            selector(
                term(expr("label_1", "In", "label_1_val"), fields=(expr(NAME, "In", "host_1"),)),
                term(fields=(expr(NAME, "In", "host_1"),)),
            ),
            node("host_1"),
            True,
            id="the second term matches",
        ),
    ],
)
def test_node_selector_match(sel: NodeSelector, the_node: Node, want: bool) -> None:
    assert node_selector(sel).match(the_node) is want
    assert match_node_selector_terms(the_node, sel) == (want, None)


@pytest.mark.parametrize(
    ("reqs", "error"),
    [
        pytest.param(
            (expr("foo", "Exists", "bar", "baz"),),
            'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: ["bar","baz"]: '
            "values set must be empty for exists and does not exist",
            id="Exists with values is rejected",
        ),
        pytest.param(
            (expr("baz", "invalid", "5"),),
            'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "invalid": '
            'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
            id="an unknown operator is rejected",
        ),
        pytest.param(
            (expr("foo", "In"),),
            "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []: "
            "for 'in', 'notin' operators, values set can't be empty",
            id="In without values is rejected",
        ),
        pytest.param(
            (expr("foo", "Gt", "1", "2"),),
            'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: ["1","2"]: '
            "for 'Gt', 'Lt' operators, exactly one value is required",
            id="Gt with two values is rejected",
        ),
        pytest.param(
            (expr("foo", "Lt", "seven"),),
            'nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "seven": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
            id="Lt with a non-integer is rejected",
        ),
    ],
)
def test_label_expression_parse_errors(
    reqs: tuple[NodeSelectorRequirement, ...], error: str
) -> None:
    with pytest.raises(NodeSelectorParseError) as info:
        node_selector(selector(term(*reqs)))
    assert str(info.value) == error


def test_field_expression_with_unsupported_operator() -> None:
    with pytest.raises(NodeSelectorParseError) as info:
        node_selector(selector(term(fields=(expr(NAME, "Exists"),))))
    assert str(info.value) == (
        'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": '
        'supported values: "In", "NotIn"'
    )


def test_path_prefix_is_applied() -> None:
    with pytest.raises(NodeSelectorParseError, match=r"^added\.nodeSelectorTerms\[0\]"):
        node_selector(selector(term(expr("foo", "In"))), "added")


def preferred(weight: int, t: NodeSelectorTerm) -> PreferredSchedulingTerm:
    return PreferredSchedulingTerm(weight, t)


@pytest.mark.parametrize(
    ("terms", "the_node", "score"),
    [
        pytest.param(
            (
                preferred(5, term(expr("foo", "In", "bar"))),
                preferred(3, term(expr("zone", "Exists"))),
                preferred(2, term(fields=(expr(NAME, "In", "n1"),))),
            ),
            node("n1", foo="bar", zone="a"),
            10,
            id="weights of all matching terms add up",
        ),
        pytest.param(
            (
                preferred(5, term(expr("foo", "In", "bar"))),
                preferred(3, term(expr("zone", "Exists"))),
            ),
            node("n1", zone="a"),
            3,
            id="non-matching terms add nothing",
        ),
        pytest.param(
            (preferred(0, term(expr("foo", "In"))), preferred(4, term())),
            node("n1"),
            0,
            id="zero-weight and empty terms are skipped unparsed",
        ),
    ],
)
def test_preferred_scheduling_terms_score(
    terms: tuple[PreferredSchedulingTerm, ...], the_node: Node, score: int
) -> None:
    assert preferred_scheduling_terms(terms).score(the_node) == score


def test_preferred_scheduling_terms_report_parse_errors() -> None:
    terms = (
        preferred(1, term(fields=(expr(NAME, "In", "a", "b"),))),
        preferred(1, term(expr("invalid key", "In", "v"))),
    )
    with pytest.raises(NodeSelectorParseError) as info:
        preferred_scheduling_terms(terms)
    assert [e.field for e in info.value.errors] == [
        "[0].matchFields[0].values",
        "[1].matchExpressions[0].key",
    ]


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        pytest.param("foo", True, id="a plain name is a valid key"),
        pytest.param("example.com/foo-bar_1.2", True, id="a prefixed name is a valid key"),
        pytest.param("Example.com/foo", False, id="an uppercase prefix is invalid"),
        pytest.param("/foo", False, id="an empty prefix is invalid"),
        pytest.param("a/b/c", False, id="two slashes are invalid"),
        pytest.param("-foo", False, id="a leading dash is invalid"),
        pytest.param("x" * 64, False, id="a 64 character name is too long"),
    ],
)
def test_label_key_validation(key: str, valid: bool) -> None:
    assert (not label_key_errors(key)) is valid
