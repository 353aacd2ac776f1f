"""A scenario starting from a capture reads its pods as stored, as the scheduler would."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topospread.engine.sim.scenario import parse_scenario
from topospread.errors import ValidationError


def _scenario(pod_metadata: dict) -> dict:
    return {
        "apiVersion": "topospread.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "captured"},
        "cluster": {
            "objects": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "namespace": "default",
                        "labels": {"app": "web", "pod-template-hash": "5d8f7c"},
                        **pod_metadata,
                    },
                    "spec": {
                        "containers": [{"name": "web", "image": "nginx"}],
                        # Admission merged matchLabelKeys into the selector (KEP-3243).
                        "topologySpreadConstraints": [
                            {
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "DoNotSchedule",
                                "labelSelector": {
                                    "matchLabels": {"app": "web"},
                                    "matchExpressions": [
                                        {
                                            "key": "pod-template-hash",
                                            "operator": "In",
                                            "values": ["5d8f7c"],
                                        }
                                    ],
                                },
                                "matchLabelKeys": ["pod-template-hash"],
                            }
                        ],
                    },
                }
            ]
        },
    }


def test_a_captured_pod_with_merged_match_label_keys_is_read_as_stored() -> None:
    scenario = parse_scenario(_scenario({"name": "web-1", "uid": "1f0e"}), "capture.yaml")
    assert [o.metadata.name for o in scenario.objects] == ["web-1"]


def test_the_same_pod_written_by_hand_is_refused_as_the_api_server_refuses_it_on_create() -> None:
    import pytest

    from topospread.errors import ValidationError

    with pytest.raises(ValidationError, match="exists in both matchLabelKeys and labelSelector"):
        parse_scenario(_scenario({"name": "web-1"}), "by-hand.yaml")


STORED = Path(__file__).parents[2] / "data" / "stored" / "pod-ratcheted-node-affinity.yaml"


def _with(pod: dict) -> dict:
    return {
        "apiVersion": "topospread.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "captured"},
        "cluster": {"objects": [pod]},
    }


def test_a_captured_pod_the_server_kept_past_a_tightened_rule_is_read_as_stored() -> None:
    # kubernetes#128212: since v1.32 a create refuses "old value!" in a required node
    # affinity term; the server keeps the pods it stored before, and updates ratchet.
    pod = yaml.safe_load(STORED.read_text())
    scenario = parse_scenario(_with(pod), "capture.yaml")
    assert [o.metadata.name for o in scenario.objects] == ["stored-before-1-32"]


def test_the_same_pod_without_its_uid_is_refused_as_a_create_is() -> None:
    pod = yaml.safe_load(STORED.read_text())
    del pod["metadata"]["uid"]
    with pytest.raises(ValidationError, match="old value!"):
        parse_scenario(_with(pod), "capture.yaml")
