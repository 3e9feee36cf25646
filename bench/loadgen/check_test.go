package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		ok     bool
	}{
		{200, `{"jsonrpc":"2.0","id":1,"result":{"status":"matched","nation":"AUS"}}`, true},
		{200, `{"jsonrpc":"2.0","id":1,"result":[{"status":"error"}]}`, true},
		{200, `[{"jsonrpc":"2.0","id":1,"result":{}}]`, true},
		{200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"too many addresses"}}`, false},
		{200, `{"jsonrpc":"2.0","id":123456789012,"error":{"code":-32600}}`, false},
		{200, `{"jsonrpc":"2.0","error":{"code":-32700},"id":null}`, false},
		{200, `ok`, false},
		{200, ``, false},
		{401, `{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{429, `slow down`, false},
	} {
		if err := check(c.status, []byte(c.body)); (err == nil) != c.ok {
			t.Errorf("check(%d, %s) = %v, want ok %v", c.status, c.body, err, c.ok)
		}
	}
}

func TestBuildBodies(t *testing.T) {
	addrs := [][]string{{"Joe Blogs", "10 Jones St", "Melbourne VIC 3000"}, {"A", "B"}, {"C", "D"}, {"E", "F"}, {"G", "H"}}
	type request struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  struct {
			Address   []string `json:"address"`
			Addresses []any    `json:"addresses"`
		} `json:"params"`
	}
	decode := func(b []byte) request {
		t.Helper()
		var r request
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		if r.JSONRPC != "2.0" || r.Method != "addr_check" {
			t.Fatalf("body %s: not an addr_check call", b)
		}
		return r
	}

	single, err := buildBodies(addrs, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(single) != len(addrs) {
		t.Fatalf("batch 1: %d bodies, want %d", len(single), len(addrs))
	}
	if r := decode(single[0]); len(r.Params.Address) != 3 || r.Params.Address[2] != "Melbourne VIC 3000" || r.Params.Addresses != nil {
		t.Errorf("batch 1: body %s, want params.address with the first address", single[0])
	}

	// A batch larger than the addresses wraps round them.
	big, err := buildBodies(addrs, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(big) != 1 {
		t.Fatalf("batch 7 of 5 addresses: %d bodies, want 1", len(big))
	}
	r := decode(big[0])
	if r.Params.Address != nil || len(r.Params.Addresses) != 7 {
		t.Fatalf("batch 7: body %s, want params.addresses with 7", big[0])
	}
	if s, ok := r.Params.Addresses[3].(string); !ok || s != "E\nF" {
		t.Errorf("batch 7: fourth address %#v, want the lines joined, \"E\\nF\"", r.Params.Addresses[3])
	}
	if a, ok := r.Params.Addresses[5].([]any); !ok || len(a) != 3 {
		t.Errorf("batch 7: sixth address %#v, want the first address again, as lines", r.Params.Addresses[5])
	}
}

func TestReadList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.csv")
	list := `ADDRESS_DETAIL_PID,ADDRESS,ALIAS_PRINCIPAL
GAACT1,"1 MAIN RD, BELCONNEN ACT 2617",P
GAACT2,"UNIT 12, LEVEL 3, BELCONNEN TOWERS, 1 BENJAMIN WAY, BELCONNEN ACT 2617",P
GAACT3,"SUITE 4, GROUND, TOWER B, THE PARK, 1 BENJAMIN WAY, BELCONNEN ACT 2617",P
`
	if err := os.WriteFile(path, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	f := func(n int, want [][]string, wantErr string) {
		t.Helper()
		got, err := readList(path, n)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("readList(%d): error %v, want one with %q", n, err, wantErr)
			}
			return
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("readList(%d) = %q, %v, want %q", n, got, err, want)
		}
	}
	f(1, [][]string{{"JO CITIZEN", "1 MAIN RD", "BELCONNEN ACT 2617"}}, "")
	f(3, [][]string{
		{"JO CITIZEN", "1 MAIN RD", "BELCONNEN ACT 2617"},
		{"JO CITIZEN", "UNIT 12", "LEVEL 3", "BELCONNEN TOWERS", "1 BENJAMIN WAY", "BELCONNEN ACT 2617"},
		{"SUITE 4", "GROUND", "TOWER B", "THE PARK", "1 BENJAMIN WAY", "BELCONNEN ACT 2617"}, // seven lines: the recipient dropped
	}, "")
	f(4, nil, "3 addresses, -pool asks for 4")
	if err := os.WriteFile(path, []byte("A,B\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f(1, nil, "no ADDRESS column")
}
