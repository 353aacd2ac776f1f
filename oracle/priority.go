package main

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
)

// systemPriorityClasses are the classes every API server creates at start-up
// (pkg/apis/scheduling SystemPriorityClasses), added unless the input has one by name.
func systemPriorityClasses() []*schedulingv1.PriorityClass {
	policy := v1.PreemptLowerPriority
	return []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000, PreemptionPolicy: &policy},
		{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000, PreemptionPolicy: &policy},
	}
}

// admitPriorities runs upstream's Priority admission plugin (as on create) on every pod
// that has not been through an API server (no uid) and carries no spec.priority: a pod
// written with its priority is taken as already resolved (the API server would refuse
// one whose value differs from its class's). The plugin reads the classes through an
// informer over a fake API server, as it does in kube-apiserver.
func admitPriorities(classes []*schedulingv1.PriorityClass, pods []*v1.Pod) error {
	var todo []*v1.Pod
	for _, p := range pods {
		if p.UID == "" && p.Spec.Priority == nil {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	named := map[string]bool{}
	var objs []runtime.Object
	for _, c := range classes {
		named[c.Name] = true
		objs = append(objs, c)
	}
	for _, c := range systemPriorityClasses() {
		if !named[c.Name] {
			objs = append(objs, c)
		}
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	plugin := priority.NewPlugin()
	plugin.SetExternalKubeClientSet(client)
	plugin.SetExternalKubeInformerFactory(factory)
	if err := plugin.ValidateInitialization(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel() // the informers stop with ctx; Shutdown waits for them
		factory.Shutdown()
	}()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for _, p := range todo {
		internal := &api.Pod{}
		if err := legacyscheme.Scheme.Convert(p, internal, nil); err != nil {
			return err
		}
		attrs := admission.NewAttributesRecord(internal, nil, api.Kind("Pod").WithVersion("v1"),
			p.Namespace, p.Name, api.Resource("pods").WithVersion("v1"), "", admission.Create,
			&metav1.CreateOptions{}, false, nil)
		if err := plugin.Admit(ctx, attrs, nil); err != nil {
			return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		p.Spec.Priority = internal.Spec.Priority
		p.Spec.PriorityClassName = internal.Spec.PriorityClassName
		if internal.Spec.PreemptionPolicy != nil {
			policy := v1.PreemptionPolicy(*internal.Spec.PreemptionPolicy)
			p.Spec.PreemptionPolicy = &policy
		}
	}
	return nil
}
