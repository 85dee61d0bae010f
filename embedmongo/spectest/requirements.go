package spectest

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ServerInfo describes the server the tests run against, for runOnRequirements.
type ServerInfo struct {
	Version  [3]int
	Topology string // "single", "replicaset", "sharded" or "load-balanced"
	// Serverless, Auth and CSFLE are always false for this runner: it does not configure them.
	Serverless, Auth, CSFLE bool
}

func (s ServerInfo) String() string {
	return fmt.Sprintf("%d.%d.%d %s", s.Version[0], s.Version[1], s.Version[2], s.Topology)
}

// probeServer asks the server for its version (buildInfo.versionArray) and topology (hello).
func probeServer(ctx context.Context, client *mongo.Client, loadBalanced bool) (ServerInfo, error) {
	var info ServerInfo
	admin := client.Database("admin")
	var build struct {
		VersionArray []int64 `bson:"versionArray"`
		Version      string  `bson:"version"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&build); err != nil {
		return info, fmt.Errorf("buildInfo: %w", err)
	}
	switch {
	case len(build.VersionArray) >= 3:
		for i := 0; i < 3; i++ {
			info.Version[i] = int(build.VersionArray[i])
		}
	default:
		info.Version = parseVersion(build.Version)
	}
	var hello bson.D
	if err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return info, fmt.Errorf("hello: %w", err)
	}
	info.Topology = "single"
	if msg, _ := lookup(hello, "msg"); msg == "isdbgrid" {
		info.Topology = "sharded"
	} else if _, ok := lookup(hello, "setName"); ok {
		info.Topology = "replicaset"
	}
	if loadBalanced {
		info.Topology = "load-balanced"
	}
	return info, nil
}

// satisfied returns "" when one of reqs is met (or reqs is empty), else why none is.
func (s ServerInfo) satisfied(reqs []requirement) string {
	if len(reqs) == 0 {
		return ""
	}
	var reasons []string
	for _, r := range reqs {
		why := s.meets(r)
		if why == "" {
			return ""
		}
		reasons = append(reasons, why)
	}
	return strings.Join(reasons, "; ")
}

func (s ServerInfo) meets(r requirement) string {
	if r.MinServerVersion != "" && compareVersions(s.Version, parseVersion(r.MinServerVersion)) < 0 {
		return "requires server >= " + r.MinServerVersion
	}
	if r.MaxServerVersion != "" && compareVersions(s.Version, parseVersion(r.MaxServerVersion)) > 0 {
		return "requires server <= " + r.MaxServerVersion
	}
	if len(r.Topologies) > 0 {
		ok := false
		for _, t := range r.Topologies {
			// "sharded" accepts any sharded cluster; we never know whether shards are replica sets.
			if t == s.Topology {
				ok = true
			}
		}
		if !ok {
			return "requires topology " + strings.Join(r.Topologies, "|")
		}
	}
	switch r.Serverless {
	case "require":
		if !s.Serverless {
			return "requires serverless"
		}
	case "forbid":
		if s.Serverless {
			return "forbids serverless"
		}
	}
	if r.Auth != nil && *r.Auth != s.Auth {
		return fmt.Sprintf("requires auth=%v", *r.Auth)
	}
	if r.AuthMechanism != "" {
		return "requires auth mechanism " + r.AuthMechanism
	}
	if r.CSFLE != nil && r.CSFLE != false && !s.CSFLE {
		return "requires CSFLE"
	}
	if len(r.ServerParameters) > 0 {
		return "requires server parameters (not checked by this runner)"
	}
	return ""
}

// parseVersion parses "major[.minor[.patch]]", ignoring anything after the third component or
// after a non-digit suffix (pre-release tags).
func parseVersion(s string) [3]int {
	var v [3]int
	for i, part := range strings.SplitN(s, ".", 3) {
		end := 0
		for end < len(part) && part[end] >= '0' && part[end] <= '9' {
			end++
		}
		n, _ := strconv.Atoi(part[:end])
		v[i] = n
		if end < len(part) {
			break
		}
	}
	return v
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
