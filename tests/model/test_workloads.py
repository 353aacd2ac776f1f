"""Decoding the kinds lint reads: DaemonSets, Jobs and CronJobs through the same path as the
others, and field errors reported at their path in the real object."""

from __future__ import annotations

import pytest

from topospread.errors import DecodeError
from topospread.model.objects import Deployment, Pod
from topospread.model.workloads import (
    CronJob,
    DaemonSet,
    Job,
    decode_manifest,
    decode_manifests,
    pod_spec_path,
)

TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        "containers": [{"name": "x", "image": "x"}],
    },
}


def test_a_cronjob_keeps_its_job_templates_pod_and_parallelism() -> None:
    cron = decode_manifest(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "report", "namespace": "batch"},
            "spec": {"jobTemplate": {"spec": {"parallelism": 3, "template": TEMPLATE}}},
        }
    )
    assert isinstance(cron, CronJob)
    assert cron.parallelism == 3
    assert cron.template is not None
    assert cron.template.labels == {"app": "x"}
    assert cron.template.namespace == "batch"


def test_a_job_and_a_daemonset_decode_with_their_templates() -> None:
    job = decode_manifest(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {"template": TEMPLATE},
        }
    )
    daemons = decode_manifest(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "d"},
            "spec": {"template": TEMPLATE},
        }
    )
    assert isinstance(job, Job)
    assert job.parallelism is None
    assert job.template is not None
    assert isinstance(daemons, DaemonSet)
    assert daemons.metadata.namespace == "default"


def test_a_deployment_and_a_pod_decode_as_the_simulator_and_explain_read_them() -> None:
    deployment = decode_manifest(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {"template": TEMPLATE},
        }
    )
    pod = decode_manifest(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, **TEMPLATE}
    )
    assert isinstance(deployment, Deployment)
    assert isinstance(pod, Pod)


def test_a_wrong_type_in_a_cronjob_is_reported_at_its_path_in_the_cronjob() -> None:
    bad = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "report"},
        "spec": {
            "jobTemplate": {
                "spec": {
                    "parallelism": "many",
                    "template": {"spec": {"topologySpreadConstraints": [{"maxSkew": "one"}]}},
                }
            }
        },
    }
    with pytest.raises(DecodeError) as caught:
        decode_manifest(bad, "cron.yaml")
    assert [str(e) for e in caught.value.errors] == [
        "spec.jobTemplate.spec.template.spec.topologySpreadConstraints[0].maxSkew: "
        'Invalid value: "one": expected int32, got string',
        'spec.jobTemplate.spec.parallelism: Invalid value: "many": expected int32',
    ]
    assert caught.value.source == "cron.yaml: CronJob report"


def test_documents_with_lists_keep_the_index_of_their_document_and_skip_other_kinds() -> None:
    decoded = decode_manifests(
        [
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}],
            },
            None,
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {"template": TEMPLATE},
            },
        ]
    )
    assert [index for index, _ in decoded.objects] == [2]
    assert decoded.skipped == ("v1/ConfigMap c",)


def test_pod_spec_paths_per_kind() -> None:
    assert pod_spec_path("Deployment") == "spec.template.spec"
    assert pod_spec_path("CronJob") == "spec.jobTemplate.spec.template.spec"
    assert pod_spec_path("Pod") == "spec"
