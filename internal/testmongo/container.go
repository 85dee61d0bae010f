package testmongo

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go/modules/mongodb"
)

// mongoImage is the real MongoDB the container target runs.
const mongoImage = "mongo:7"

// startContainer starts a MongoDB container when a Docker engine answers.
// It returns a target with an empty uri and a note when there is none.
func startContainer(ctx context.Context) target {
	if why := dockerUnavailable(); why != "" {
		return target{name: "testcontainers", note: why}
	}
	c, err := mongodb.Run(ctx, mongoImage)
	if err != nil {
		return target{name: "testcontainers", note: "starting " + mongoImage + ": " + err.Error()}
	}
	uri, err := c.ConnectionString(ctx)
	if err != nil {
		_ = c.Terminate(context.Background())
		return target{name: "testcontainers", note: "container connection string: " + err.Error()}
	}
	return target{name: "testcontainers", uri: uri, close: func() { _ = c.Terminate(context.Background()) }}
}

// dockerUnavailable says why no Docker engine can be used, or "" if one
// answers on its socket. It only dials, so it fails in milliseconds.
func dockerUnavailable() string {
	if host := os.Getenv("DOCKER_HOST"); host != "" {
		network, addr, ok := strings.Cut(host, "://")
		if !ok || (network != "unix" && network != "tcp") {
			return "" // ssh:// and friends: let testcontainers try
		}
		if dial(network, addr) {
			return ""
		}
		return "MONGODB_URI unset and DOCKER_HOST " + host + " does not answer"
	}
	socks := []string{"/var/run/docker.sock"}
	if home, err := os.UserHomeDir(); err == nil {
		socks = append(socks, filepath.Join(home, ".docker", "run", "docker.sock"))
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		socks = append(socks, filepath.Join(rt, "docker.sock"))
	}
	for _, s := range socks {
		if dial("unix", s) {
			return ""
		}
	}
	return "MONGODB_URI unset and no Docker engine found"
}

func dial(network, addr string) bool {
	c, err := net.DialTimeout(network, addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
