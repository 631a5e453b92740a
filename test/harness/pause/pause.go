// The sandbox ("pause") program of the test cluster's Pods: it holds the Pod's namespaces open,
// reaps orphans (it is PID 1 when a Pod shares its process namespace) and exits on SIGINT or
// SIGTERM. No registry is reachable here, so the cluster harness builds this into a local image
// instead of pulling registry.k8s.io/pause. Standard library only: it builds outside any module.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		os.Stdout.WriteString("svc-test pause\n")
		return
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
