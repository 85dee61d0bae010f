package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bankd/bankd/internal/load"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	if c.URL != "http://127.0.0.1:8080" || c.Accounts != 100 || c.Clients != 16 || c.Duration != 10*time.Second ||
		c.Transfers != 0 || c.Skew != (load.Skew{}) || c.RetryRate != 0 || c.APIKey != "" || o.embedded || o.json {
		t.Errorf("defaults: %+v", o)
	}

	o, err = parseFlags(strings.Fields("-url http://h:9 -accounts 50 -clients 64 -duration 5s -transfers 1000 "+
		"-skew hot:2:90 -retry-rate 0.1 -seed 42 -amount-max 7 -initial-balance 900 -json"),
		env(map[string]string{"BANKD_API_KEY": "from-env"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c = o.cfg
	if c.URL != "http://h:9" || c.Accounts != 50 || c.Clients != 64 || c.Duration != 5*time.Second ||
		c.Transfers != 1000 || c.Skew != (load.Skew{Hot: 2, Percent: 90}) || c.RetryRate != 0.1 ||
		c.Seed != 42 || c.AmountMax != 7 || c.InitialBalance != 900 || c.APIKey != "from-env" || !o.json {
		t.Errorf("parsed: %+v", c)
	}

	o, err = parseFlags([]string{"-api-key", "flag"}, env(map[string]string{"BANKD_API_KEY": "env"}), io.Discard)
	if err != nil || o.cfg.APIKey != "flag" {
		t.Errorf("-api-key should override the environment: %v %v", o, err)
	}
	o, err = parseFlags([]string{"-embedded"}, env(nil), io.Discard)
	if err != nil || !o.embedded {
		t.Errorf("-embedded: %v %v", o, err)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, args := range []string{
		"-accounts 1",
		"-accounts 0",
		"-clients 0",
		"-duration 0s",
		"-duration -1s",
		"-transfers -5",
		"-skew hot",
		"-skew hot:0:50",
		"-skew hot:2:150",
		"-skew zipf",
		"-skew hot:200:50", // more hot accounts than the default 100
		"-retry-rate 1.1",
		"-retry-rate -0.5",
		"-amount-max 0",
		"-initial-balance -1",
		"-url localhost:8080",
		"-url http://",
		"-embedded -url http://127.0.0.1:9000",
		"-accounts ten",
		"-nosuchflag",
		"extra-argument",
	} {
		if _, err := parseFlags(strings.Fields(args), env(nil), io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
