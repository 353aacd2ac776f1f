// Command kubectl is upstream kubectl, built as a module dependency at the release that
// matches the pinned Kubernetes (k8s.io/kubectl v0.X.Y is Kubernetes v1.X.Y; build.sh
// refuses a mismatch), so that tests drive the real client against the real API server.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand())
}
