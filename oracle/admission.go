package main

import (
	"context"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	schedulingv1api "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	podstore "k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageclass/setdefault"
)

// admissionPlugins are the default-on admission plugins of kube-apiserver v1.37.1
// (pkg/kubeapiserver/options/plugins.go, DefaultOffAdmissionPlugins) that change what the
// scheduler reads of a pod or claim being created, in AllOrderedPlugins order. The chain
// runs every mutating plugin in this order, the registry's PrepareForCreate runs next,
// then every validating one, as the API server's create handler does.
var admissionPlugins = []string{
	limitranger.PluginName,              // LimitRanger
	priority.PluginName,                 // Priority
	defaulttolerationseconds.PluginName, // DefaultTolerationSeconds
	setdefault.PluginName,               // DefaultStorageClass
	runtimeclass.PluginName,             // RuntimeClass
}

// admitter is upstream's admission chain over a fake API server holding the input's
// PriorityClasses (with the system classes), LimitRanges, RuntimeClasses and
// StorageClasses, read by the plugins through informers as in kube-apiserver.
type admitter struct {
	chain  admission.Interface
	cancel context.CancelFunc
	stop   func()
}

func newAdmitter(cluster *Cluster) (*admitter, error) {
	var objs []runtime.Object
	named := map[string]bool{}
	for _, c := range cluster.PriorityClasses {
		named[c.Name] = true
		objs = append(objs, c)
	}
	// Every API server creates these at start-up (the scheduling storage's PostStartHook).
	for _, c := range schedulingv1api.SystemPriorityClasses() {
		if !named[c.Name] {
			objs = append(objs, c)
		}
	}
	for _, r := range cluster.LimitRanges {
		objs = append(objs, r)
	}
	for _, r := range cluster.RuntimeClasses {
		objs = append(objs, r)
	}
	for _, o := range cluster.Storage {
		if sc, ok := o.(*storagev1.StorageClass); ok {
			objs = append(objs, sc)
		}
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	plugins := admission.NewPlugins()
	limitranger.Register(plugins)
	priority.Register(plugins)
	defaulttolerationseconds.Register(plugins)
	setdefault.Register(plugins)
	runtimeclass.Register(plugins)
	ctx, cancel := context.WithCancel(context.Background())
	initializer := genericinitializer.New(client, nil, factory, nil, utilfeature.DefaultFeatureGate, nil, ctx.Done(), nil)
	chain, err := plugins.NewFromPlugins(admissionPlugins, noConfig{}, initializer, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return &admitter{chain: chain, cancel: cancel, stop: factory.Shutdown}, nil
}

type noConfig struct{}

func (noConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }

func (a *admitter) close() {
	a.cancel() // the informers stop with ctx; Shutdown waits for them
	a.stop()
}

var objectInterfaces = admission.NewObjectInterfacesFromScheme(legacyscheme.Scheme)

// admitPod makes a pod that has not been through an API server (no uid: a manifest) what
// the API server would store: the mutating plugins, PrepareForCreate (disabled fields
// dropped, matchLabelKeys merged into selectors, pod-level resources defaulted), then the
// validating plugins, on the internal type. The status is kept as written: a pod in a
// cluster file with a node, phase or start time describes one that exists. Stored pods
// (with a uid) already carry all of it and are left alone.
func (a *admitter) admitPod(ctx context.Context, pod *v1.Pod) error {
	if pod.UID != "" {
		return nil
	}
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return err
	}
	attrs := admission.NewAttributesRecord(internal, nil, api.Kind("Pod").WithVersion("v1"),
		pod.Namespace, pod.Name, api.Resource("pods").WithVersion("v1"), "", admission.Create,
		&metav1.CreateOptions{}, false, nil)
	if m, ok := a.chain.(admission.MutationInterface); ok {
		if err := m.Admit(ctx, attrs, objectInterfaces); err != nil {
			return err
		}
	}
	podstore.Strategy.PrepareForCreate(ctx, internal)
	if v, ok := a.chain.(admission.ValidationInterface); ok {
		if err := v.Validate(ctx, attrs, objectInterfaces); err != nil {
			return err
		}
	}
	created := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, created, nil); err != nil {
		return err
	}
	status := pod.Status
	*pod = *created
	pod.Status = status
	return nil
}

// admitClaim gives a claim that has not been through an API server DefaultStorageClass
// (and the rest of the chain, which leaves claims alone).
func (a *admitter) admitClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	if claim.UID != "" {
		return nil
	}
	internal := &api.PersistentVolumeClaim{}
	if err := legacyscheme.Scheme.Convert(claim, internal, nil); err != nil {
		return err
	}
	attrs := admission.NewAttributesRecord(internal, nil, api.Kind("PersistentVolumeClaim").WithVersion("v1"),
		claim.Namespace, claim.Name, api.Resource("persistentvolumeclaims").WithVersion("v1"), "",
		admission.Create, &metav1.CreateOptions{}, false, nil)
	if m, ok := a.chain.(admission.MutationInterface); ok {
		if err := m.Admit(ctx, attrs, objectInterfaces); err != nil {
			return err
		}
	}
	if v, ok := a.chain.(admission.ValidationInterface); ok {
		if err := v.Validate(ctx, attrs, objectInterfaces); err != nil {
			return err
		}
	}
	created := &v1.PersistentVolumeClaim{}
	if err := legacyscheme.Scheme.Convert(internal, created, nil); err != nil {
		return err
	}
	status := claim.Status
	*claim = *created
	claim.Status = status
	return nil
}

// admitCluster admits the cluster's unstored claims (before any pod reads them), its
// assigned pods and the incoming pod; errors name the input they come from.
func admitCluster(cluster *Cluster, pod *v1.Pod, podSource string) error {
	a, err := newAdmitter(cluster)
	if err != nil {
		return err
	}
	defer a.close()
	ctx := context.Background()
	for _, o := range cluster.Storage {
		if claim, ok := o.(*v1.PersistentVolumeClaim); ok {
			if err := a.admitClaim(ctx, claim); err != nil {
				return &inputError{source: "cluster", err: err}
			}
		}
	}
	for _, p := range cluster.Pods {
		if err := a.admitPod(ctx, p); err != nil {
			return &inputError{source: "cluster", err: err}
		}
	}
	if pod != nil {
		if err := a.admitPod(ctx, pod); err != nil {
			return &inputError{source: podSource, err: err}
		}
	}
	return nil
}

// admitPods admits further pods (the nominated ones) with the cluster's objects.
func admitPods(cluster *Cluster, pods []*v1.Pod) error {
	a, err := newAdmitter(cluster)
	if err != nil {
		return err
	}
	defer a.close()
	for _, p := range pods {
		if err := a.admitPod(context.Background(), p); err != nil {
			return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}
