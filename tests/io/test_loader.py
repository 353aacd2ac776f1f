"""One reading path for files, standard input and API responses: what is accepted and refused."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from topospread.errors import DecodeError, InputError
from topospread.io import decode_api_json, decode_objects, load_cluster, load_pod
from topospread.io.reader import read_input
from topospread.model.objects import Node

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def test_a_raw_api_list_is_accepted() -> None:
    raw = {
        "kind": "NodeList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "1"},
        "items": [{k: v for k, v in NODE.items() if k not in ("apiVersion", "kind")}],
    }
    objects, skipped = decode_api_json(json.dumps(raw).encode(), "GET /api/v1/nodes")
    assert [type(o) for o in objects] == [Node]
    assert skipped == ()
    objects, _ = decode_objects([raw], "GET /api/v1/nodes")
    assert objects[0].name == "n1"


def test_a_mistyped_api_version_is_an_error_not_a_skipped_kind() -> None:
    with pytest.raises(InputError) as info:
        decode_objects([{**NODE, "apiVersion": "v11"}], "c.yaml")
    assert info.value.lines() == [
        'c.yaml: apiVersion: Unsupported value: "v11": supported values: "v1"'
    ]


def test_an_api_version_of_the_wrong_type_is_one_line() -> None:
    with pytest.raises(InputError) as info:
        decode_objects([{**NODE, "apiVersion": ["v1"]}], "c.yaml")
    assert info.value.lines() == [
        'c.yaml: apiVersion: Invalid value: "array": expected string, got array'
    ]


def test_objects_need_valid_names() -> None:
    for meta, message in (
        ({"generateName": "n-"}, "metadata.name: Required value: name or generateName is required"),
        ({"name": "Bad_Name"}, 'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123'),
    ):
        with pytest.raises(InputError) as info:
            decode_objects([{**NODE, "metadata": meta}], "c.yaml")
        assert message in info.value.lines()[0]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "Bad"}}
    with pytest.raises(InputError, match=r'metadata\.namespace: Invalid value: "Bad"'):
        decode_objects([pod], "p.yaml")


def test_the_same_object_twice_is_refused_naming_both_places(tmp_path: Path) -> None:
    capture = tmp_path / "capture.yaml"
    capture.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE]}))
    with pytest.raises(InputError) as info:
        load_cluster([capture, capture])
    assert info.value.lines() == [
        f"{capture}: items[0]: duplicate Node n1 (first in {capture}: items[0])"
    ]


def test_an_empty_allocatable_is_kept_and_a_missing_one_defaults_to_capacity() -> None:
    empty = {**NODE, "status": {"allocatable": {}, "capacity": {"cpu": "4"}}}
    missing = {**NODE, "metadata": {"name": "n2"}, "status": {"capacity": {"cpu": "4"}}}
    objects, _ = decode_objects([empty, missing], "c.yaml")
    assert objects[0].allocatable == {}
    assert objects[1].allocatable["cpu"].milli_value() == 4000


def test_negative_requests_are_refused() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]},
    }
    with pytest.raises(InputError) as info:
        decode_objects([pod], "p.yaml")
    assert info.value.lines() == [
        'p.yaml: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
        "must be greater than or equal to 0"
    ]


def test_a_pod_with_a_mistyped_api_version_is_not_zero_pods(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v2\nkind: Pod\nmetadata: {name: p}\n")
    with pytest.raises(InputError) as info:
        load_pod(path)
    assert "Unsupported value" in info.value.lines()[0]


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result: list[BaseException] = []
    worker = threading.Thread(target=lambda: _catch(result, fifo), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive()
    assert isinstance(result[0], DecodeError)
    assert "named pipe" in str(result[0])


def _catch(result: list[BaseException], path: Path) -> None:
    try:
        read_input(path)
    except BaseException as exc:
        result.append(exc)


def test_devices_and_folders_are_refused(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(DecodeError, match="is a device"):
        read_input("/dev/zero")
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    with pytest.raises(DecodeError, match="is a device"):
        read_input(link)
    with pytest.raises(DecodeError, match="is a directory"):
        read_input(tmp_path)
    assert time.monotonic() - started < 1


def test_files_over_the_limit_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 100)
    with pytest.raises(DecodeError, match="larger than the 10-byte input limit"):
        read_input(big, limit=10)
