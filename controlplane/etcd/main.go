// Command etcd is upstream etcd's server, built as a module dependency: the version is
// the one go.mod requires (the one k8s.io/kubernetes pins), and `go install` of etcd
// itself is refused because its main module has replace directives.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
