"""Label key/value and DNS name checks, with apimachinery's exact wording."""

import pytest

from topospread.model.names import (
    is_decimal_integer,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_key,
    is_qualified_name,
    is_valid_label_value,
    regex_error,
)

KEY_REGEX = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
    f"regex used for validation is '{KEY_REGEX}')"
)
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


@pytest.mark.parametrize(
    "key",
    [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "simple/simple",
        "now.with.dots/simple",
        "1.2.3.4/5678",
        "Uppercase_Is_OK_123",
        "example.com/Uppercase_Is_OK_123",
        "a" * 63,
        "a" * 253 + "/" + "b" * 63,
    ],
    ids=lambda key: f"{key[:30]} is a valid label key",
)
def test_valid_label_keys_have_no_errors(key):
    assert is_label_key(key) == []
    assert is_qualified_name(key) == []


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("cantendwithadash-", ["name part " + KEY_MSG]),
        ("", ["name part must be non-empty", "name part " + KEY_MSG]),
        ("example.com/", ["name part must be non-empty", "name part " + KEY_MSG]),
        ("/simple", ["prefix part must be non-empty"]),
        ("a" * 64, ["name part must be no more than 63 bytes"]),
        ("Example.com/abc", ["prefix part " + SUBDOMAIN_MSG]),
        (
            "only/one/slash",
            [
                "a valid label key "
                + KEY_MSG
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        (
            "a" * 254 + "/abc",
            ["prefix part must be no more than 253 bytes"],
        ),
    ],
    ids=[
        "a trailing dash is reported against the name part",
        "an empty key is both empty and not matching the pattern",
        "a prefix with an empty name is reported twice for the name",
        "an empty prefix is reported alone",
        "a 64-byte name is too long",
        "an uppercase prefix is not a DNS subdomain",
        "two slashes give the whole-key message only",
        "a 254-byte prefix is too long",
    ],
)
def test_invalid_label_keys_give_apimachinery_messages(key, expected):
    assert is_label_key(key) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", []),
        ("simple", []),
        ("under_score.and-dash", []),
        ("a" * 63, []),
        ("-leading", [VALUE_MSG]),
        ("has space", [VALUE_MSG]),
        ("a" * 64, ["must be no more than 63 bytes"]),
        ("é", [VALUE_MSG]),
    ],
    ids=[
        "an empty value is valid",
        "a plain word is valid",
        "underscores dots and dashes inside are valid",
        "63 bytes is the limit",
        "a leading dash is invalid",
        "a space is invalid",
        "64 bytes is too long",
        "non-ASCII letters are invalid",
    ],
)
def test_label_values(value, expected):
    assert is_valid_label_value(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("node-1", []),
        ("node-1.example.com", []),
        ("Node-1", [SUBDOMAIN_MSG]),
        ("a" * 254, ["must be no more than 253 bytes"]),
    ],
    ids=[
        "a simple node name is valid",
        "a dotted name is valid",
        "uppercase is invalid",
        "254 bytes is too long",
    ],
)
def test_dns1123_subdomains(value, expected):
    assert is_dns1123_subdomain(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("kube-system", []),
        ("a.b", ["must not contain dots"]),
        ("Bad", [LABEL_MSG]),
        ("a" * 64, ["must be no more than 63 bytes"]),
    ],
    ids=[
        "a namespace name is valid",
        "a dotted subdomain is told it has dots",
        "uppercase gets the regex message",
        "64 bytes is too long",
    ],
)
def test_dns1123_labels(value, expected):
    assert is_dns1123_label(value) == expected


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("0", True),
        ("42", True),
        ("-7", True),
        ("", False),
        ("-", False),
        ("007", False),
        ("-0", False),
        ("1e3", False),
    ],
    ids=[
        "zero",
        "a positive number",
        "a negative number",
        "empty",
        "a lone minus",
        "leading zeros",
        "minus zero",
        "an exponent",
    ],
)
def test_decimal_integers_must_be_canonical(value, ok):
    assert (is_decimal_integer(value) == []) is ok


def test_regex_error_without_examples_names_only_the_regex():
    assert regex_error("msg", "x+") == "msg (regex used for validation is 'x+')"
