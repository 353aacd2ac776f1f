"""YAML written by topospread reads back, as kubectl reads it, as the values written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topospread.io.yamlread import parse_yaml_documents
from topospread.io.yamlwrite import dump_yaml

# Strings that PyYAML's own resolver would write plain and goyaml.v2 reads as numbers.
NUMBERS_TO_GO_STRINGS_TO_PYYAML = ["9715e4", "1e5", "1_000", "0o17", "0b101", "+1", ".5", "-.5e3"]


@pytest.mark.parametrize("text", NUMBERS_TO_GO_STRINGS_TO_PYYAML)
def test_a_string_that_looks_like_a_number_to_go_is_written_quoted(text: str) -> None:
    written = dump_yaml({"metadata": {"labels": {"story": text}}})

    assert f'story: "{text}"' in written
    assert parse_yaml_documents(written.encode()) == [{"metadata": {"labels": {"story": text}}}]


def test_ordinary_strings_stay_plain_and_numbers_stay_numbers() -> None:
    written = dump_yaml({"name": "web-0", "replicas": 3, "ratio": 0.5, "on": True})

    assert written == 'name: web-0\nreplicas: 3\nratio: 0.5\n"on": true\n'
    assert parse_yaml_documents(written.encode()) == [
        {"name": "web-0", "replicas": 3, "ratio": 0.5, "on": True}
    ]


label_like = st.text(alphabet="0123456789eE.+-_xobO:~yesnoYNtrufalTRUFAL", max_size=12)


@given(st.dictionaries(label_like, label_like, max_size=6))
def test_any_string_map_reads_back_as_written(labels: dict[str, str]) -> None:
    document = {"metadata": {"labels": labels}}

    assert parse_yaml_documents(dump_yaml(document).encode()) == [document]
