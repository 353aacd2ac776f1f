package main

import (
	"errors"
	"fmt"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// emptyV1Config is what kube-scheduler runs with when given no config file:
// the v1 defaults (one profile, "default-scheduler", all default plugins).
const emptyV1Config = `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}`

// loadSchedulerConfig decodes (strictly), defaults and validates a
// KubeSchedulerConfiguration exactly as kube-scheduler loads its --config
// file. data may be YAML or JSON; nil means "no config given".
func loadSchedulerConfig(data []byte) (*config.KubeSchedulerConfiguration, error) {
	if data == nil {
		data = []byte(emptyV1Config)
	}
	// The UniversalDecoder converts to the internal type and applies defaults.
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("couldn't decode as KubeSchedulerConfiguration, got %s", gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if errs := validation.ValidateKubeSchedulerConfiguration(cfg); errs != nil {
		return nil, errs
	}
	if len(cfg.Profiles) == 0 {
		return nil, errors.New("no profiles")
	}
	return cfg, nil
}

// profileFor returns the profile that schedules pods with the given schedulerName.
func profileFor(cfg *config.KubeSchedulerConfiguration, schedulerName string) (*config.KubeSchedulerProfile, error) {
	for i := range cfg.Profiles {
		if cfg.Profiles[i].SchedulerName == schedulerName {
			return &cfg.Profiles[i], nil
		}
	}
	names := make([]string, 0, len(cfg.Profiles))
	for _, p := range cfg.Profiles {
		names = append(names, p.SchedulerName)
	}
	return nil, fmt.Errorf("no profile for spec.schedulerName %q (profiles: %q)", schedulerName, names)
}
