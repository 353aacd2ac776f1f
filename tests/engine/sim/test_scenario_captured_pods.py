"""A scenario starting from a capture reads its pods as stored, as the scheduler would."""

from __future__ import annotations

from topospread.engine.sim.scenario import parse_scenario


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
