"""YAML to JSON values as sigs.k8s.io/yaml (goyaml.v2) gives them; the oracle agrees on the
cases that reach a decision (tests/differential/test_yaml_reading.py)."""

from __future__ import annotations

import math
import time

import pytest

from topospread.io.yamlread import MAX_DEPTH, YamlSyntaxError, parse_yaml_documents


def value_of(text: str):
    return parse_yaml_documents(f"v: {text}\n".encode())[0]["v"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # resolve.go's map: YAML 1.1 booleans, including y/n, and the null spellings.
        ("y", True), ("Y", True), ("yes", True), ("on", True), ("ON", True), ("True", True),
        ("n", False), ("no", False), ("off", False), ("FALSE", False),
        ("~", None), ("null", None), ("Null", None), ("", None),
        ("nULL", "nULL"), ("yES", "yES"), ("tRUE", "tRUE"),
        # strconv.ParseInt(s, 0, 64) with underscores removed.
        ("12", 12), ("+5", 5), ("-7", -7), ("0x1F", 31), ("0o17", 15), ("017", 15),
        ("0b101", 5), ("-0b11", -3), ("1_000", 1000), ("0", 0), ("-0", 0),
        ("9223372036854775807", 2**63 - 1), ("18446744073709551615", 2**64 - 1),
        ("18446744073709551616", 1.8446744073709552e19),
        # Floats: yamlStyleFloat, or a leading dot.
        ("1e0", 1.0), ("1.5", 1.5), (".5", 0.5), ("1e-400", 0.0), ("08", 8.0),
        # Not numbers for goyaml.v2: sexagesimal, out of range, dates, words.
        ("1:00", "1:00"), ("1e400", "1e400"), ("0x", "0x"), ("2024-01-01", "2024-01-01"),
        ("2023-02-29", "2023-02-29"), ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
        ("+inf", "+inf"), ("1__0", 10), ("_1", "_1"), ("0o", "0o"),
        # Quoted and tagged scalars.
        ("'y'", "y"), ('"1e0"', "1e0"), ("!!str 12", "12"), ("!!float 1", 1.0),
        ("!!int 0x10", 16), ("!!bool yes", True), ("!!null ~", None),
        ("!!timestamp 2024-01-01", "2024-01-01"), ("!!binary aGVsbG8=", "hello"),
        ("!custom text", "text"), ("! 12", "12"),
    ],
)  # fmt: skip
def test_scalars_resolve_as_goyaml_v2(text: str, expected: object) -> None:
    got = value_of(text)
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("!!int abc", "cannot decode !!str `abc` as a !!int"),
        ("!!int 1.5", "cannot decode !!float `1.5` as a !!int"),
        ("!!bool maybe", "cannot decode !!str `maybe` as a !!bool"),
        ("!!null x", "cannot decode !!str `x` as a !!null"),
        ("!!timestamp 2023-02-29", "cannot decode !!str `2023-02-29` as a !!timestamp"),
        ("!!binary a$b=", "!!binary value contains invalid base64 data"),
        (".inf", "json: unsupported value: +Inf"),
        ("-.Inf", "json: unsupported value: -Inf"),
        (".nan", "json: unsupported value: NaN"),
        ("!!float .inf", "json: unsupported value: +Inf"),
    ],
)
def test_values_json_cannot_hold_are_refused(text: str, message: str) -> None:
    with pytest.raises(YamlSyntaxError, match=r"^yaml: ") as info:
        value_of(text)
    assert message in str(info.value)


def test_map_keys_become_strings() -> None:
    doc = parse_yaml_documents(b"y: a\n1: b\n1.5: c\n1e7: d\n0.1: e\n")[0]
    assert doc == {"true": "a", "1": "b", "1.5": "c", "1e+07": "d", "0.1": "e"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\na: 2\n", 'line 2: key "a" already set in map'),
        ("y: 1\ntrue: 2\n", "line 2: key true already set in map"),
        ("~: 1\n", "unsupported map key: null"),
        ("? [a]\n: 1\n", "invalid map key: a sequence"),
    ],
)
def test_bad_keys_are_refused(text: str, message: str) -> None:
    with pytest.raises(YamlSyntaxError) as info:
        parse_yaml_documents(text.encode())
    assert message in str(info.value)


def test_sets_omaps_and_merges() -> None:
    assert parse_yaml_documents(b"!!set {a, b}")[0] == {"a": None, "b": None}
    assert parse_yaml_documents(b"!!omap [{a: 1}]")[0] == [{"a": 1}]
    doc = parse_yaml_documents(b"a: &x {b: 1, c: 2}\nd:\n  <<: *x\n  b: 3\n")[0]
    assert doc["d"] == {"b": 3, "c": 2}
    doc = parse_yaml_documents(b"- {<<: [{a: 1}, {a: 2, b: 3}]}\n")[0]
    assert doc == [{"a": 1, "b": 3}]


def test_documents_split_as_yamlreader_splits_them() -> None:
    assert parse_yaml_documents(b"a: 1\n---\n---\nb: 2\n--- # note\nc: 3\n") == [
        {"a": 1}, {"b": 2}, {"c": 3},
    ]  # fmt: skip
    with pytest.raises(YamlSyntaxError, match="invalid Yaml document separator: x"):
        parse_yaml_documents(b"a: 1\n--- x\n")
    assert parse_yaml_documents(b"# only a comment\n") == [None]


def test_a_billion_laughs_is_refused_fast() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    started = time.process_time()
    with pytest.raises(YamlSyntaxError, match="document contains excessive aliasing"):
        parse_yaml_documents("\n".join(lines).encode())
    assert time.process_time() - started < 1


def test_a_few_aliases_are_fine() -> None:
    doc = parse_yaml_documents(b"a: &a {x: 1}\nb: *a\nc: *a\n")[0]
    assert doc["b"] == doc["c"] == {"x": 1}


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deep_nesting_is_refused_without_recursion(depth: int) -> None:
    with pytest.raises(YamlSyntaxError, match="maximum nesting depth"):
        parse_yaml_documents(b"[" * depth + b"]" * depth)
    with pytest.raises(YamlSyntaxError, match="maximum nesting depth"):
        parse_yaml_documents(b"- " * depth + b"x\n")


def test_nesting_up_to_the_limit_is_read() -> None:
    depth = MAX_DEPTH
    value = parse_yaml_documents(b"[" * depth + b"]" * depth)[0]
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


def test_long_numbers_do_not_hit_python_int_limits() -> None:
    assert value_of("9" * 100_000) == "9" * 100_000
    assert value_of("0" * 5000 + "17") == 15
    assert math.isclose(value_of("1" + "0" * 300 + ".0"), 1e300)


def test_managed_fields_are_skipped_only_when_safe() -> None:
    text = (
        b"apiVersion: v1\nkind: List\nitems:\n"
        b"- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n    managedFields:\n"
        b"    - manager: m\n      fieldsV1: {f:spec: {}}\n    uid: u\n"
        b"- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\n    managedFields:\n"
        b"    - manager: &x m\n  spec: {}\n"
    )
    skipped = parse_yaml_documents(text, skip_managed_fields=True)[0]
    full = parse_yaml_documents(text)[0]
    assert "managedFields" not in skipped["items"][0]["metadata"]
    assert skipped["items"][0]["metadata"]["uid"] == "u"
    # The block with an anchor is read whole.
    assert skipped["items"][1]["metadata"]["managedFields"] == [{"manager": "m"}]
    assert full["items"][0]["metadata"]["managedFields"][0]["manager"] == "m"


def test_a_managed_fields_line_inside_a_string_is_not_cut() -> None:
    text = b"a: |\n  managedFields:\n    - x\n  tail\nmetadata: {name: n}\n"
    assert parse_yaml_documents(text, skip_managed_fields=True) == parse_yaml_documents(text)


def test_a_syntax_error_in_skipped_managed_fields_is_still_an_error() -> None:
    text = b"metadata:\n  managedFields:\n  - a: [1, 2\n  name: n\n"
    with pytest.raises(YamlSyntaxError):
        parse_yaml_documents(text, skip_managed_fields=True)


def test_a_duplicate_field_is_named_by_its_path_as_strict_validation_names_it() -> None:
    text = b"spec:\n  topologySpreadConstraints:\n  - maxSkew: 1\n    maxSkew: 2\n"
    with pytest.raises(YamlSyntaxError) as info:
        parse_yaml_documents(text)
    assert str(info.value) == (
        'yaml: line 4: key "maxSkew" already set in map (strict decoding error: '
        'duplicate field "spec.topologySpreadConstraints[0].maxSkew")'
    )
