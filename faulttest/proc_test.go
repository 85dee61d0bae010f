package faulttest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bankd/bankd/internal/testmongo"
)

func TestMain(m *testing.M) { testmongo.Main(m) }

// binaries are the real programs under test, built once per run.
type binaries struct{ bankd, embedmongo string }

// build compiles cmd/bankd and cmd/embedmongo (without -race: that applies to the test
// process only) into a directory that lives as long as t.
func build(t *testing.T) binaries {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"github.com/bankd/bankd/cmd/bankd", "github.com/bankd/bankd/cmd/embedmongo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built bankd and embedmongo in %v", time.Since(start).Round(time.Millisecond))
	return binaries{bankd: filepath.Join(dir, "bankd"), embedmongo: filepath.Join(dir, "embedmongo")}
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proc is a child process whose output goes to a log file.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed once Wait returned
	waitErr error
}

// cleanEnv is the test's environment without bankd's own settings, so that a developer's
// MONGODB_URI or BANKD_* variables don't change what the child processes do.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MONGODB_URI=") || strings.HasPrefix(kv, "BANKD_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// startProc starts bin; t's cleanup stops it (SIGTERM, then SIGKILL) and, if t failed or
// FAULTTEST_LOGS is set, logs the tail of its output.
func startProc(t *testing.T, name, bin string, args, env []string) *proc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() || os.Getenv("FAULTTEST_LOGS") != "" {
			t.Logf("--- last lines of %s's log (%s):\n%s", name, logPath, p.tail(40))
		}
	})
	return p
}

func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not die on SIGKILL", p.name)
	}
}

// stop asks for a graceful stop, and kills the process if it takes too long.
func (p *proc) stop() {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls ready until it succeeds, the process exits, or 30 s pass.
func (p *proc) waitFor(t *testing.T, what string, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ready()
		if err == nil {
			return
		}
		if !p.alive() {
			t.Fatalf("%s exited before %s (%v):\n%s", p.name, what, p.waitErr, p.tail(40))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not %s after 30s: %v\n%s", p.name, what, err, p.tail(40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bankdFlags are the short timings the fault tests run bankd with: leases of a dead process
// expire after a second and recovery looks for them five times a second.
var bankdFlags = []string{"--lease-duration", "1s", "--lock-wait", "3s", "--recovery-interval", "200ms", "--log-level", "warn"}

// startBankd starts `bankd serve` on addr with the extra arguments and environment, and
// waits until /readyz answers 200.
func startBankd(t *testing.T, c *client, bin, name, addr string, args []string, env ...string) *proc {
	t.Helper()
	all := append([]string{"serve", "--addr", addr}, bankdFlags...)
	p := startProc(t, name, bin, append(all, args...), cleanEnv(env...))
	base := "http://" + addr
	p.waitFor(t, "ready", func() error {
		a := c.get(t.Context(), base, "/readyz")
		if a.err != nil {
			return a.err
		}
		if a.status != http.StatusOK {
			return fmt.Errorf("/readyz: %d", a.status)
		}
		return nil
	})
	return p
}

// startEngine starts cmd/embedmongo on a data directory and a free port, and returns its
// connection string.
func startEngine(t *testing.T, bin string) (*proc, string) {
	t.Helper()
	addr := freeAddr(t)
	p := startProc(t, "embedmongo", bin, []string{"--dir", t.TempDir(), "--addr", addr}, cleanEnv())
	p.waitFor(t, "listening", func() error {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return conn.Close()
	})
	return p, "mongodb://" + addr + "/?directConnection=true"
}
