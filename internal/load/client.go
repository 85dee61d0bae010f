package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to bankd's HTTP API.
type Client struct {
	base    string // without trailing slash
	apiKey  string
	hc      *http.Client
	timeout time.Duration // per request
}

// NewClient returns a client for the API at baseURL whose connection pool
// keeps an idle connection for each of up to conns concurrent callers, so a
// steady load never pays for new TCP handshakes.
func NewClient(baseURL, apiKey string, conns int, timeout time.Duration) *Client {
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          2*conns + 8,
		MaxIdleConnsPerHost:   2*conns + 8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: timeout,
		DisableCompression:    true,
	}
	return &Client{
		base:    strings.TrimRight(baseURL, "/"),
		apiKey:  apiKey,
		hc:      &http.Client{Transport: tr},
		timeout: timeout,
	}
}

// Close drops the idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Result is one HTTP answer.
type Result struct {
	Status     int
	Code       string // the problem+json "code" of an error answer; "" on 2xx
	Body       []byte
	Replayed   bool          // Idempotent-Replayed: true
	RetryAfter time.Duration // from Retry-After, 0 when absent
	Latency    time.Duration
}

// OK reports a 2xx answer.
func (r *Result) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Transient reports an answer that asks to come back later with the same key:
// the first request with that key is still in progress (409), or the service
// could not serve it now (503).
func (r *Result) Transient() bool {
	return r.Status == http.StatusConflict && r.Code == "idempotency_key_in_use" ||
		r.Status == http.StatusServiceUnavailable
}

// Outcome is the key transfers are counted under: "ok" or the error's code.
func (r *Result) Outcome() string {
	if r.OK() {
		return "ok"
	}
	return r.Code
}

func (c *Client) newRequest(ctx context.Context, method, path, key string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return req, nil
}

// do sends one request and reads the whole answer.
func (c *Client) do(ctx context.Context, method, path, key string, body []byte) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := c.newRequest(ctx, method, path, key, body)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	return readResult(resp, start)
}

func readResult(resp *http.Response, start time.Time) (*Result, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %d answer: %w", resp.StatusCode, err)
	}
	r := &Result{
		Status:   resp.StatusCode,
		Body:     body,
		Replayed: strings.EqualFold(resp.Header.Get("Idempotent-Replayed"), "true"),
		Latency:  time.Since(start),
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		r.RetryAfter = time.Duration(s) * time.Second
	}
	if !r.OK() {
		r.Code = problemCode(body, resp.StatusCode)
	}
	return r, nil
}

// problemCode extracts the stable "code" of a problem+json body, falling
// back to "http_<status>" for answers that are not one.
func problemCode(body []byte, status int) string {
	var p struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(body, &p) == nil && p.Code != "" {
		return p.Code
	}
	return "http_" + strconv.Itoa(status)
}

// Get sends a GET.
func (c *Client) Get(ctx context.Context, path string) (*Result, error) {
	return c.do(ctx, http.MethodGet, path, "", nil)
}

// Post sends a POST with an Idempotency-Key.
func (c *Client) Post(ctx context.Context, path, key string, body []byte) (*Result, error) {
	return c.do(ctx, http.MethodPost, path, key, body)
}

// PostDropped sends a POST but makes sure its answer is lost to the caller,
// as a client that timed out or lost its connection would. It uses a
// connection of its own: once the whole request is written it waits delay
// for the answer (0: not at all) and then closes the connection. If the
// answer won the race it is returned, so that a later replay can be compared
// with it; the caller must still act as if it had never come. A nil Result
// means the answer was lost (or the request could not be sent).
func (c *Client) PostDropped(ctx context.Context, path, key string, body []byte, delay time.Duration) *Result {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := c.newRequest(ctx, http.MethodPost, path, key, body)
	if err != nil {
		return nil
	}
	req.Close = true // one request on this connection
	conn, err := dial(ctx, req.URL)
	if err != nil {
		return nil
	}
	defer conn.Close()
	start := time.Now()
	_ = conn.SetDeadline(start.Add(c.timeout))
	if err := req.Write(conn); err != nil || delay <= 0 {
		return nil
	}
	_ = conn.SetReadDeadline(time.Now().Add(delay))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return nil
	}
	res, err := readResult(resp, start)
	if err != nil {
		return nil
	}
	return res
}

// dial opens a connection to u's host, with TLS for https.
func dial(ctx context.Context, u *url.URL) (net.Conn, error) {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil || u.Scheme != "https" {
		return conn, err
	}
	return tls.Client(conn, &tls.Config{ServerName: u.Hostname()}), nil
}

// RetryPolicy bounds PostUntilAnswer.
type RetryPolicy struct {
	Deadline    time.Duration // give up after this long in total
	BaseBackoff time.Duration // first wait; doubles up to MaxBackoff
	MaxBackoff  time.Duration
}

// DefaultRetryPolicy suits a loaded local service.
var DefaultRetryPolicy = RetryPolicy{Deadline: 60 * time.Second, BaseBackoff: 5 * time.Millisecond, MaxBackoff: time.Second}

// ErrNoAnswer means a request with one key never got a final answer.
var ErrNoAnswer = errors.New("no final answer")

// PostUntilAnswer sends a POST again and again with the same key and body
// until it gets a final answer: anything but a transport error, a 409
// idempotency_key_in_use or a 503. Between tries it backs off exponentially,
// waiting at least Retry-After when the service asks for it (capped by
// MaxBackoff). It returns the final answer and the number of tries.
func (c *Client) PostUntilAnswer(ctx context.Context, path, key string, body []byte, p RetryPolicy) (*Result, int, error) {
	deadline := time.Now().Add(p.Deadline)
	backoff := p.BaseBackoff
	var last string
	for tries := 1; ; tries++ {
		res, err := c.Post(ctx, path, key, body)
		if err == nil && !res.Transient() {
			return res, tries, nil
		}
		wait := backoff
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d %s", res.Status, res.Code)
			wait = max(wait, min(res.RetryAfter, p.MaxBackoff))
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, tries, fmt.Errorf("%w for key %s after %d tries (last: %s)", ErrNoAnswer, key, tries, last)
		}
		select {
		case <-ctx.Done():
			return nil, tries, ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, p.MaxBackoff)
	}
}
