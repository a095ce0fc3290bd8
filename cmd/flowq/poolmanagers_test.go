package main

import (
	"strings"
	"testing"
)

// TestPoolManagersFlag: --pool-managers and FLOWQ_POOL_MANAGERS name the
// PoolManagers whose transfers give the reason v4_netted (the scenario
// chain's is not a built-in one); the flag beats the environment, an empty
// value means none, and a malformed address is a usage error naming the flag.
func TestPoolManagersFlag(t *testing.T) {
	const pm = "0xd41f238402e746adb689c754be6859fa5c2d7c6d" // the scenarios' PoolManager (examples/scenarios/truth.json)
	const bundle = "../../examples/scenarios/geth/v4_v2_arb.json"
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want bool
	}{
		{"default", nil, nil, false},
		{"flag", nil, []string{"--pool-managers", pm}, true},
		{"env", map[string]string{"FLOWQ_POOL_MANAGERS": pm}, nil, true},
		{"flag empty beats env", map[string]string{"FLOWQ_POOL_MANAGERS": pm}, []string{"--pool-managers", ""}, false},
	} {
		args := append(append([]string{"inspect"}, c.args...), bundle)
		out, errs, code := flowq(t, c.env, "", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errs)
		}
		if got := strings.Contains(out, "v4_netted"); got != c.want {
			t.Errorf("%s: v4_netted %v, want %v:\n%s", c.name, got, c.want, out)
		}
	}
	_, errs, code := flowq(t, nil, "", "inspect", "--pool-managers", "0xzz", bundle)
	if code != 2 || !strings.Contains(errs, "--pool-managers") {
		t.Errorf("malformed: exit %d: %s", code, errs)
	}
}
