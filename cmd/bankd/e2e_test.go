package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildBankd compiles the real binary once per test run.
func buildBankd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bankd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type proc struct {
	cmd  *exec.Cmd
	base string
	logs *bytes.Buffer
}

func startBankd(t *testing.T, bin, addr, dir string, extraEnv ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data-dir", dir)
	cmd.Env = append(append(os.Environ(), "MONGODB_URI="), extraEnv...)
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, base: "http://" + addr, logs: logs}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("bankd did not become ready:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("bankd exited with %v:\n%s", err, p.logs)
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("bankd did not stop on SIGTERM:\n%s", p.logs)
	}
}

func (p *proc) post(t *testing.T, path, key, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", p.base+path, strings.NewReader(body))
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 201 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (p *proc) get(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(p.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// The real binary, driven over HTTP, restarted: every completed transfer is still there,
// balances and the audit agree, and `bankd audit` passes on the data dir.
func TestBinaryEndToEndSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBankd(t)
	dir := t.TempDir()
	addr := freePort(t)
	p := startBankd(t, bin, addr, dir)
	a := p.post(t, "/v1/accounts", "acct-a", `{"currency":"USD","owner":"alice"}`)["id"].(string)
	b := p.post(t, "/v1/accounts", "acct-b", `{"currency":"USD","owner":"bob"}`)["id"].(string)
	p.post(t, "/v1/accounts/"+a+"/deposits", "dep-1", `{"amount":10000,"currency":"USD"}`)
	var ids []string
	for i := 0; i < 10; i++ {
		tr := p.post(t, "/v1/transfers", fmt.Sprintf("tr-%d", i),
			fmt.Sprintf(`{"from_account_id":%q,"to_account_id":%q,"amount":%d,"currency":"USD"}`, a, b, 100+i))
		if tr["status"] != "completed" {
			t.Fatalf("transfer %d: %v", i, tr)
		}
		ids = append(ids, tr["id"].(string))
	}
	p.stop(t)
	if !strings.Contains(p.logs.String(), "stopped cleanly") {
		t.Errorf("no clean shutdown in logs:\n%s", p.logs)
	}

	p = startBankd(t, bin, addr, dir)
	defer p.stop(t)
	for _, id := range ids {
		if status, tr := p.get(t, "/v1/transfers/"+id); status != 200 || tr["status"] != "completed" {
			t.Errorf("after restart, transfer %s: %d %v", id, status, tr)
		}
	}
	_, acct := p.get(t, "/v1/accounts/"+a)
	want := 10000.0
	for i := 0; i < 10; i++ {
		want -= float64(100 + i)
	}
	if acct["balance"] != want {
		t.Errorf("alice balance after restart = %v, want %v", acct["balance"], want)
	}
	// A retry of an old key after the restart replays the original answer.
	tr := p.post(t, "/v1/transfers", "tr-3", fmt.Sprintf(`{"from_account_id":%q,"to_account_id":%q,"amount":103,"currency":"USD"}`, a, b))
	if tr["id"] != ids[3] {
		t.Errorf("replayed transfer id = %v, want %s", tr["id"], ids[3])
	}
	if status, audit := p.get(t, "/v1/audit"); status != 200 || audit["ok"] != true {
		t.Errorf("audit: %d %v", status, audit)
	}
}

func TestRefusesPublicAddressWithoutKeys(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0"}, func(string) string { return "" }, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "without API keys") {
		t.Fatalf("got %v, want a refusal to listen publicly without keys", err)
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, func(string) string { return "" }, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "bankd ") {
		t.Errorf("version output %q", out.String())
	}
}

func TestAuditCommand(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	env := func(k string) string { return "" }
	if err := run(context.Background(), []string{"audit", "--data-dir", dir}, env, &out, io.Discard); err != nil {
		t.Fatalf("audit of an empty bank: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "{") {
		t.Errorf("audit printed no report: %q", out.String())
	}
}
