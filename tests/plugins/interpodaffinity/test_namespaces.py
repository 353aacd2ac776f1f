"""Namespace objects: decoded with the API server's default label, listed for the plugin."""

from __future__ import annotations

from topospread.engine.cluster import Cluster
from topospread.model.decode import decode_documents
from topospread.model.objects import Namespace
from topospread.model.validation import validate_object


def test_a_namespace_is_decoded_with_its_name_label_and_reaches_cluster_objects():
    decoded = decode_documents(
        [
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "team-a", "labels": {"team": "a"}},
            }
        ]
    )
    (ns,) = decoded.objects
    assert isinstance(ns, Namespace)
    # SetDefaults_Namespace labels every namespace with its own name.
    assert dict(ns.labels) == {"team": "a", "kubernetes.io/metadata.name": "team-a"}
    assert ns.metadata.namespace == ""
    cluster = Cluster.from_objects(decoded.objects)
    assert cluster.objects.namespaces == (ns,)
    assert cluster.objects.stateful_sets == ()
    assert cluster.objects.namespace("team-a") is ns
    assert cluster.objects.namespace("team-b") is None


def test_namespace_labels_are_validated():
    decoded = decode_documents(
        [
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "x", "labels": {"bad key!": "v"}},
            }
        ]
    )
    (ns,) = decoded.objects
    assert isinstance(ns, Namespace)
    assert validate_object(ns)
