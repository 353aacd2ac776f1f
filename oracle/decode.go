package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	// Register core/v1, apps/v1 and policy/v1 (with their API-server defaulting
	// functions) in legacyscheme.
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
)

// inputError is a problem with what the user gave us; it maps to exit code 2.
type inputError struct {
	source string
	err    error
}

func (e *inputError) Error() string { return fmt.Sprintf("%s: %v", e.source, e.err) }
func (e *inputError) Unwrap() error { return e.err }

type sourcedBytes struct {
	source string
	data   []byte
}

// Cluster is the decoded, defaulted content of the cluster inputs, in input order.
type Cluster struct {
	Nodes        []*v1.Node
	Pods         []*v1.Pod // only pods with spec.nodeName set
	Services     []*v1.Service
	RCs          []*v1.ReplicationController
	ReplicaSets  []*appsv1.ReplicaSet
	StatefulSets []*appsv1.StatefulSet
	Namespaces   []*v1.Namespace                 // their labels feed inter-pod affinity namespaceSelectors
	PDBs         []*policyv1.PodDisruptionBudget // DefaultPreemption's PDB lister
	// PriorityClasses, LimitRanges and RuntimeClasses (and the StorageClasses in Storage)
	// feed the admission of pods and claims not yet stored (no uid), see admission.go.
	PriorityClasses []*schedulingv1.PriorityClass
	LimitRanges     []*v1.LimitRange
	RuntimeClasses  []*nodev1.RuntimeClass
	// Storage holds the PersistentVolumes, PersistentVolumeClaims, StorageClasses,
	// CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments, in input order:
	// the volume plugins (VolumeBinding, VolumeZone, NodeVolumeLimits,
	// VolumeRestrictions) read them through the informers of the fake clientset.
	Storage []runtime.Object
	// DRA holds the ResourceClaims, ResourceClaimTemplates, DeviceClasses and
	// ResourceSlices (resource.k8s.io/v1), in input order: DynamicResources reads them
	// through the DRA manager's informers over the fake clientset.
	DRA []runtime.Object
	// Incoming is the pod to schedule; the API server (and so DefaultPreemption's pod
	// lister, which re-reads the preemptor) knows it.
	Incoming *v1.Pod
}

// wantedKinds are the kinds we decode, with the only group/version accepted
// for each. Everything else is skipped.
var wantedKinds = map[string]string{
	"Node":                  "v1",
	"Pod":                   "v1",
	"Service":               "v1",
	"ReplicationController": "v1",
	"ReplicaSet":            "apps/v1",
	"StatefulSet":           "apps/v1",
	"Namespace":             "v1",
	"PodDisruptionBudget":   "policy/v1",
	"PriorityClass":         "scheduling.k8s.io/v1",
	"LimitRange":            "v1",
	"RuntimeClass":          "node.k8s.io/v1",
	"PersistentVolume":      "v1",
	"PersistentVolumeClaim": "v1",
	"StorageClass":          "storage.k8s.io/v1",
	"CSINode":               "storage.k8s.io/v1",
	"CSIDriver":             "storage.k8s.io/v1",
	"CSIStorageCapacity":    "storage.k8s.io/v1",
	"VolumeAttachment":      "storage.k8s.io/v1",
	"ResourceClaim":         "resource.k8s.io/v1",
	"ResourceClaimTemplate": "resource.k8s.io/v1",
	"DeviceClass":           "resource.k8s.io/v1",
	"ResourceSlice":         "resource.k8s.io/v1",
}

var deserializer = legacyscheme.Codecs.UniversalDeserializer()

// jsonDocuments splits YAML or JSON input (multi-document YAML separated by
// "---", or a JSON stream) into JSON documents. Empty documents are dropped.
func jsonDocuments(data []byte) ([][]byte, error) {
	var docs [][]byte
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		// JSON (possibly a stream of several values).
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			docs = append(docs, raw)
		}
		return docs, nil
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading YAML document %d: %w", i+1, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("YAML document %d: %w", i+1, err)
		}
		if s := strings.TrimSpace(string(j)); s == "null" || s == "" {
			continue
		}
		docs = append(docs, j)
	}
	return docs, nil
}

type typeAndItems struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Items      *[]json.RawMessage `json:"items"`
}

// decodeObjects flattens every List in data and decodes the wanted kinds,
// applying the API server's defaulting. Objects are returned in input order.
func decodeObjects(data []byte) ([]runtime.Object, error) {
	docs, err := jsonDocuments(data)
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, doc := range docs {
		if err := decodeJSONObject(doc, "", &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// itemKind is the kind implied by an enclosing typed list (NodeList items are
// Nodes even when, as in raw API responses, they carry no kind).
func decodeJSONObject(doc []byte, itemKind string, out *[]runtime.Object) error {
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		// A bare array of objects.
		var items []json.RawMessage
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return fmt.Errorf("invalid JSON array: %w", err)
		}
		for _, item := range items {
			if err := decodeJSONObject(item, itemKind, out); err != nil {
				return err
			}
		}
		return nil
	}
	var ti typeAndItems
	if err := json.Unmarshal(doc, &ti); err != nil {
		return fmt.Errorf("not a Kubernetes object: %w", err)
	}
	if ti.Kind == "" {
		if itemKind == "" {
			return errors.New("object has no kind")
		}
		ti.Kind = itemKind
	}
	if ti.Items != nil && strings.HasSuffix(ti.Kind, "List") {
		for _, item := range *ti.Items {
			if err := decodeJSONObject(item, strings.TrimSuffix(ti.Kind, "List"), out); err != nil {
				return err
			}
		}
		return nil
	}
	wantGV, wanted := wantedKinds[ti.Kind]
	if !wanted {
		return nil // other kinds are skipped
	}
	if ti.APIVersion == "" {
		// Items of raw API lists omit apiVersion and kind; the kind is unambiguous.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc, &m); err != nil {
			return fmt.Errorf("invalid %s: %w", ti.Kind, err)
		}
		m["apiVersion"], _ = json.Marshal(wantGV)
		m["kind"], _ = json.Marshal(ti.Kind)
		doc, _ = json.Marshal(m)
	} else if ti.APIVersion != wantGV {
		return fmt.Errorf("%s: unsupported apiVersion %q (want %q)", ti.Kind, ti.APIVersion, wantGV)
	}
	obj, _, err := deserializer.Decode(doc, nil, nil)
	if err != nil {
		return fmt.Errorf("decoding %s: %w", ti.Kind, err)
	}
	legacyscheme.Scheme.Default(obj)
	*out = append(*out, obj)
	return nil
}

// decodeCluster decodes all cluster inputs. Pods without spec.nodeName are
// ignored (they are not placed anywhere yet).
func decodeCluster(inputs []sourcedBytes) (*Cluster, error) {
	c := &Cluster{}
	nodeNames := map[string]string{}
	// The fake API server behind the informers, like a real one, holds one
	// object per kind, namespace and name.
	workloadKeys := map[string]string{}
	addWorkload := func(source, kind string, meta *metav1.ObjectMeta) error {
		defaultNamespace(&meta.Namespace)
		if meta.Name == "" {
			return fmt.Errorf("%s without metadata.name", kind)
		}
		key := kind + " " + meta.Namespace + "/" + meta.Name
		if prev, dup := workloadKeys[key]; dup {
			return fmt.Errorf("duplicate %s (first in %s)", key, prev)
		}
		workloadKeys[key] = source
		return nil
	}
	for _, in := range inputs {
		objs, err := decodeObjects(in.data)
		if err != nil {
			return nil, &inputError{source: in.source, err: err}
		}
		for _, obj := range objs {
			switch o := obj.(type) {
			case *v1.Node:
				if o.Name == "" {
					return nil, &inputError{source: in.source, err: errors.New("Node without metadata.name")}
				}
				if prev, dup := nodeNames[o.Name]; dup {
					return nil, &inputError{source: in.source, err: fmt.Errorf("duplicate Node %q (first in %s)", o.Name, prev)}
				}
				nodeNames[o.Name] = in.source
				c.Nodes = append(c.Nodes, o)
			case *v1.Pod:
				if o.Spec.NodeName == "" {
					continue
				}
				defaultNamespace(&o.ObjectMeta.Namespace)
				c.Pods = append(c.Pods, o)
			case *v1.Service:
				if err := addWorkload(in.source, "Service", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.Services = append(c.Services, o)
			case *v1.ReplicationController:
				if err := addWorkload(in.source, "ReplicationController", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.RCs = append(c.RCs, o)
			case *appsv1.ReplicaSet:
				if err := addWorkload(in.source, "ReplicaSet", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.ReplicaSets = append(c.ReplicaSets, o)
			case *appsv1.StatefulSet:
				if err := addWorkload(in.source, "StatefulSet", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.StatefulSets = append(c.StatefulSets, o)
			case *v1.Namespace:
				// Cluster-scoped: one per name. Defaulting labelled it with its name.
				if o.Name == "" {
					return nil, &inputError{source: in.source, err: errors.New("Namespace without metadata.name")}
				}
				key := "Namespace " + o.Name
				if prev, dup := workloadKeys[key]; dup {
					return nil, &inputError{source: in.source, err: fmt.Errorf("duplicate %s (first in %s)", key, prev)}
				}
				workloadKeys[key] = in.source
				c.Namespaces = append(c.Namespaces, o)
			case *schedulingv1.PriorityClass:
				// Cluster-scoped: one per name.
				key := "PriorityClass " + o.Name
				if prev, dup := workloadKeys[key]; dup {
					return nil, &inputError{source: in.source, err: fmt.Errorf("duplicate %s (first in %s)", key, prev)}
				}
				workloadKeys[key] = in.source
				c.PriorityClasses = append(c.PriorityClasses, o)
			case *v1.LimitRange:
				if err := addWorkload(in.source, "LimitRange", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.LimitRanges = append(c.LimitRanges, o)
			case *nodev1.RuntimeClass:
				// Cluster-scoped: one per name.
				if o.Name == "" {
					return nil, &inputError{source: in.source, err: errors.New("RuntimeClass without metadata.name")}
				}
				key := "RuntimeClass " + o.Name
				if prev, dup := workloadKeys[key]; dup {
					return nil, &inputError{source: in.source, err: fmt.Errorf("duplicate %s (first in %s)", key, prev)}
				}
				workloadKeys[key] = in.source
				c.RuntimeClasses = append(c.RuntimeClasses, o)
			case *policyv1.PodDisruptionBudget:
				if err := addWorkload(in.source, "PodDisruptionBudget", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.PDBs = append(c.PDBs, o)
			case *v1.PersistentVolumeClaim:
				if err := addWorkload(in.source, "PersistentVolumeClaim", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.Storage = append(c.Storage, o)
			case *storagev1.CSIStorageCapacity:
				if err := addWorkload(in.source, "CSIStorageCapacity", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.Storage = append(c.Storage, o)
			case *resourcev1.ResourceClaim:
				if err := addWorkload(in.source, "ResourceClaim", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.DRA = append(c.DRA, o)
			case *resourcev1.ResourceClaimTemplate:
				if err := addWorkload(in.source, "ResourceClaimTemplate", &o.ObjectMeta); err != nil {
					return nil, &inputError{source: in.source, err: err}
				}
				c.DRA = append(c.DRA, o)
			case *resourcev1.DeviceClass, *resourcev1.ResourceSlice:
				// Cluster-scoped: one per kind and name.
				meta, kind := &metav1.ObjectMeta{}, "DeviceClass"
				if dc, ok := o.(*resourcev1.DeviceClass); ok {
					meta = &dc.ObjectMeta
				} else {
					meta, kind = &o.(*resourcev1.ResourceSlice).ObjectMeta, "ResourceSlice"
				}
				if meta.Name == "" {
					return nil, &inputError{source: in.source, err: fmt.Errorf("%s without metadata.name", kind)}
				}
				key := kind + " " + meta.Name
				if prev, dup := workloadKeys[key]; dup {
					return nil, &inputError{source: in.source, err: fmt.Errorf("duplicate %s (first in %s)", key, prev)}
				}
				workloadKeys[key] = in.source
				c.DRA = append(c.DRA, o)
			case *v1.PersistentVolume, *storagev1.StorageClass, *storagev1.CSINode, *storagev1.CSIDriver, *storagev1.VolumeAttachment:
				// Cluster-scoped: one per kind and name.
				meta, kind := clusterScopedMeta(o)
				if meta.Name == "" {
					return nil, &inputError{source: in.source, err: fmt.Errorf("%s without metadata.name", kind)}
				}
				key := kind + " " + meta.Name
				if prev, dup := workloadKeys[key]; dup {
					return nil, &inputError{source: in.source, err: fmt.Errorf("duplicate %s (first in %s)", key, prev)}
				}
				workloadKeys[key] = in.source
				c.Storage = append(c.Storage, o)
			}
		}
	}
	return c, nil
}

// clusterScopedMeta is the metadata and kind of a cluster-scoped storage object.
func clusterScopedMeta(obj runtime.Object) (*metav1.ObjectMeta, string) {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		return &o.ObjectMeta, "PersistentVolume"
	case *storagev1.StorageClass:
		return &o.ObjectMeta, "StorageClass"
	case *storagev1.CSINode:
		return &o.ObjectMeta, "CSINode"
	case *storagev1.CSIDriver:
		return &o.ObjectMeta, "CSIDriver"
	case *storagev1.VolumeAttachment:
		return &o.ObjectMeta, "VolumeAttachment"
	}
	return &metav1.ObjectMeta{}, fmt.Sprintf("%T", obj)
}

// decodeIncomingPod decodes the one Pod to be scheduled.
func decodeIncomingPod(in sourcedBytes) (*v1.Pod, error) {
	objs, err := decodeObjects(in.data)
	if err != nil {
		return nil, &inputError{source: in.source, err: err}
	}
	var pods []*v1.Pod
	for _, obj := range objs {
		if p, ok := obj.(*v1.Pod); ok {
			pods = append(pods, p)
		}
	}
	if len(pods) != 1 {
		return nil, &inputError{source: in.source, err: fmt.Errorf("expected exactly one Pod, found %d", len(pods))}
	}
	pod := pods[0]
	defaultNamespace(&pod.Namespace)
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	return pod, nil
}

func defaultNamespace(ns *string) {
	if *ns == "" {
		*ns = "default"
	}
}
