package isolate

import (
	"os"
	"strings"
)

// Environ is the environment of a child: this process's environment
// reduced to the Go runtime's own variables (GODEBUG, GOTRACEBACK, GORACE,
// GOCOVERDIR, ...) and PATH, with GOMAXPROCS set to procs. Nothing secret
// of the server's reaches a child that reads customers' documents.
func Environ(procs string) []string {
	env := []string{"GOMAXPROCS=" + procs}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GO") && k != "GOMEMLIMIT" && k != "GOMAXPROCS" || k == "PATH" {
			env = append(env, kv)
		}
	}
	return env
}
