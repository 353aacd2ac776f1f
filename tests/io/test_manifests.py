"""Reading manifests as kubectl reads them: YAML flow documents, lines of fields, strict
fields, and what a real `kubectl get -o yaml` prints passing untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from topospread.errors import DecodeError, InputError
from topospread.io.loader import parse_documents
from topospread.io.manifests import load_audit_objects, read_lint_objects
from topospread.model.validation import required_containers, strict_field_errors

LINT = Path(__file__).resolve().parents[1] / "data" / "lint"


def test_a_document_that_starts_with_a_brace_but_is_not_json_is_read_as_yaml_flow() -> None:
    (pod,) = parse_documents(b'{kind: "Pod", metadata: {name: p,},}\n', "f")
    assert pod == {"kind": "Pod", "metadata": {"name": "p"}}


def test_valid_json_is_still_json() -> None:
    assert parse_documents(b'[{"a": 1}, {"b": 2}]', "f") == [{"a": 1}, {"b": 2}]


def test_input_neither_json_nor_yaml_reports_the_json_decoders_error() -> None:
    with pytest.raises(DecodeError) as caught:
        parse_documents(b'{"apiVersion": "v1",\n "kind": "Pod"', "f")
    assert caught.value.message.startswith("invalid JSON at line 2")


def test_an_item_of_a_list_points_at_its_own_constraint(tmp_path: Path) -> None:
    text = (LINT / "ghost-selector.yaml").read_text(encoding="utf-8")
    body = "".join(f"  {line}\n" if line else "\n" for line in text.splitlines() if line[:1] != "#")
    listed = tmp_path / "list.yaml"
    listed.write_text(f"apiVersion: v1\nkind: List\nitems:\n- {body.lstrip()}", encoding="utf-8")
    read = read_lint_objects([str(listed)])
    (item,) = read.items
    assert item.line == 4
    assert item.locate is not None
    line = item.locate("spec.template.spec.topologySpreadConstraints[0]")
    assert line is not None
    assert listed.read_text(encoding="utf-8").splitlines()[line - 1].strip() == "- maxSkew: 1"


def test_kubectl_get_output_has_no_unknown_fields() -> None:
    captured = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "shop",
            "uid": "0b4c",
            "resourceVersion": "1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:containers": {}}},
                }
            ],
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "web",
                    "uid": "1",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                }
            ],
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "nodeAffinityPolicy": "Honor",
                }
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "web",
                    "ready": True,
                    "restartCount": 0,
                    "image": "nginx",
                    "imageID": "",
                    "state": {},
                }
            ],
        },
    }
    assert strict_field_errors(captured) == []
    assert required_containers(captured) == []


def test_a_mis_cased_field_is_an_unknown_field_at_its_path() -> None:
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "Image": "x"}]}}},
    }
    assert [str(e) for e in strict_field_errors(doc)] == [
        'strict decoding error: unknown field "spec.template.spec.containers[0].Image"'
    ]


def test_a_custom_resource_is_not_checked_for_fields() -> None:
    assert strict_field_errors({"apiVersion": "example.com/v1", "kind": "Thing", "x": 1}) == []


def test_valid_json_with_a_key_given_twice_is_refused_as_strict_validation_refuses_it() -> None:
    data = (
        b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {'
        b'"containers": [{"name": "c", "image": "x", "image": "y"}], "nodeName": "a",'
        b' "nodeName": "b"}}'
    )
    with pytest.raises(DecodeError) as caught:
        parse_documents(data, "pod.json")
    assert caught.value.lines() == [
        'pod.json: strict decoding error: duplicate field "spec.containers[0].image"',
        'pod.json: strict decoding error: duplicate field "spec.nodeName"',
    ]


def _pod(name: str, namespace: str = "shop") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}, uid: uid-{namespace}-{name}}}
spec:
  containers: [{{name: app, image: registry.k8s.io/pause:3.10}}]
"""


def _service(name: str, namespace: str = "shop") -> str:
    return f"""\
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {namespace}, uid: uid-service-{name}}}
spec:
  ports: [{{port: 80}}]
"""


PODS_LISTED_TWICE = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: web-0, namespace: shop, uid: uid-web-0}
  spec:
    containers: [{name: app, image: registry.k8s.io/pause:3.10}]
- apiVersion: v1
  kind: Pod
  metadata: {name: web-0, namespace: shop, uid: uid-web-0}
  spec:
    containers: [{name: app, image: registry.k8s.io/pause:3.10}]
"""


def _refused(*paths: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_audit_objects(str(p) for p in paths)
    return caught.value.lines()


def test_the_same_pod_in_two_captures_is_refused_naming_both_places(tmp_path: Path) -> None:
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text(_pod("web-0") + "---\n" + _pod("web-1"), encoding="utf-8")
    second.write_text(_pod("web-1"), encoding="utf-8")
    assert _refused(first, second) == [
        f"{second}: duplicate Pod shop/web-1 (first in {first}: document 2)"
    ]


def test_a_capture_given_twice_is_refused_one_line_per_object(tmp_path: Path) -> None:
    capture = tmp_path / "capture.yaml"
    capture.write_text(_pod("web-0") + "---\n" + _pod("web-1"), encoding="utf-8")
    assert _refused(capture, capture) == [
        f"{capture}: document 1: duplicate Pod shop/web-0 (first in {capture}: document 1)",
        f"{capture}: document 2: duplicate Pod shop/web-1 (first in {capture}: document 2)",
    ]


def test_a_pod_repeated_inside_one_file_is_refused_naming_both_documents(tmp_path: Path) -> None:
    capture = tmp_path / "capture.yaml"
    capture.write_text(_pod("web-0") + "---\n" + _pod("web-0"), encoding="utf-8")
    assert _refused(capture) == [
        f"{capture}: document 2: duplicate Pod shop/web-0 (first in {capture}: document 1)"
    ]


def test_an_item_repeated_in_a_list_is_named_by_its_place_in_the_list(tmp_path: Path) -> None:
    capture = tmp_path / "pods.yaml"
    capture.write_text(PODS_LISTED_TWICE, encoding="utf-8")
    assert _refused(capture) == [
        f"{capture}: items[1]: duplicate Pod shop/web-0 (first in {capture}: items[0])"
    ]


def test_the_same_name_in_two_namespaces_or_of_two_kinds_is_two_objects(tmp_path: Path) -> None:
    shop, ops = tmp_path / "shop.yaml", tmp_path / "ops.yaml"
    shop.write_text(_pod("web") + "---\n" + _service("web"), encoding="utf-8")
    ops.write_text(_pod("web", namespace="ops"), encoding="utf-8")
    objects, _ = load_audit_objects([str(shop), str(ops)])
    assert [(type(o).__name__, o.metadata.namespace, o.metadata.name) for o in objects] == [
        ("Pod", "shop", "web"),
        ("Service", "shop", "web"),
        ("Pod", "ops", "web"),
    ]
