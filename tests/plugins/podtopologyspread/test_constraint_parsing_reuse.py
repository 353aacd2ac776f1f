"""PodTopologySpread reuses the last parse of equal constraints, and only while the pod
labels its matchLabelKeys read are the same: a replica of another revision gets its own
selector."""

from __future__ import annotations

import yaml

from topospread.model.decode import decode_object
from topospread.model.objects import Pod
from topospread.testing import make_node
from topospread.testing.harness import build_spread_plugin

REPLICA = """
apiVersion: v1
kind: Pod
metadata:
  name: web-{name}
  namespace: default
  labels: {{app: web, pod-template-hash: "{revision}"}}
spec:
  containers: [{{name: c, image: pause}}]
  topologySpreadConstraints:
  - maxSkew: {skew}
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {{matchLabels: {{app: web}}}}
    matchLabelKeys: [pod-template-hash]
"""


def replica(name: str, revision: str, skew: int = 1) -> Pod:
    pod = decode_object(yaml.safe_load(REPLICA.format(name=name, revision=revision, skew=skew)))
    assert isinstance(pod, Pod)
    return pod


def plugin():
    node = make_node().name("n1").label("topology.kubernetes.io/zone", "a").obj()
    return build_spread_plugin([node])[0]


def test_two_replicas_of_one_revision_share_one_parse() -> None:
    spread = plugin()
    first = spread.constraints_for(replica("a", "v1"), "DoNotSchedule")
    second = spread.constraints_for(replica("b", "v1"), "DoNotSchedule")
    assert second is first


def test_a_replica_of_another_revision_gets_a_selector_of_its_own_hash() -> None:
    spread = plugin()
    old = spread.constraints_for(replica("a", "v1"), "DoNotSchedule")
    new = spread.constraints_for(replica("b", "v2"), "DoNotSchedule")
    assert old[0].selector.matches({"app": "web", "pod-template-hash": "v1"})
    assert not new[0].selector.matches({"app": "web", "pod-template-hash": "v1"})
    assert new[0].selector.matches({"app": "web", "pod-template-hash": "v2"})


def test_different_constraints_are_parsed_again() -> None:
    spread = plugin()
    spread.constraints_for(replica("a", "v1", skew=1), "DoNotSchedule")
    wider = spread.constraints_for(replica("b", "v1", skew=3), "DoNotSchedule")
    assert wider[0].max_skew == 3


def test_each_action_keeps_its_own_parse() -> None:
    spread = plugin()
    pod = replica("a", "v1")
    assert len(spread.constraints_for(pod, "DoNotSchedule")) == 1
    assert spread.constraints_for(pod, "ScheduleAnyway") == ()
    assert len(spread.constraints_for(pod, "DoNotSchedule")) == 1
