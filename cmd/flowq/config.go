package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/flowq/flowq/normalform"
)

// chainFlags are the configuration flags shared by the commands that
// analyse: the chain, its wrapped-native contracts and the R5 routers. Each
// flag falls back to an environment variable, then to the chain's default.
type chainFlags struct {
	chain, wrapped, routers, managers   string
	wrappedSet, routersSet, managersSet bool
}

const (
	envChain    = "FLOWQ_CHAIN"
	envWrapped  = "FLOWQ_WRAPPED_NATIVE"
	envRouters  = "FLOWQ_ROUTERS"
	envManagers = "FLOWQ_POOL_MANAGERS"
)

func (c *chainFlags) register(fs *flag.FlagSet) {
	fs.Func("chain", "chain name or id: ethereum (1), arbitrum (42161), bsc (56), optimism, base, polygon; env "+envChain+" (default ethereum)", func(s string) error { c.chain = s; return nil })
	fs.Func("wrapped-native", "comma-separated wrapped-native contracts, replacing the chain's default (empty: none); env "+envWrapped, func(s string) error { c.wrapped, c.wrappedSet = s, true; return nil })
	fs.Func("routers", "comma-separated router addresses for rule R5, replacing the chain's default (empty: none); env "+envRouters, func(s string) error { c.routers, c.routersSet = s, true; return nil })
	fs.Func("pool-managers", "comma-separated Uniswap V4 PoolManager addresses (reason v4_netted), replacing the chain's default (empty: none); env "+envManagers, func(s string) error { c.managers, c.managersSet = s, true; return nil })
}

// config resolves flags, then environment, then defaults.
// An environment variable set to the empty string means "none".
func (c *chainFlags) config(lookupEnv func(string) (string, bool)) (*normalform.Config, error) {
	name := c.chain
	if name == "" {
		name, _ = lookupEnv(envChain)
	}
	if name == "" {
		name = "ethereum"
	}
	ch, err := normalform.NetworkByName(name)
	if err != nil {
		return nil, err
	}
	list := func(flagVal string, set bool, env string) ([]normalform.Address, error) {
		if !set {
			v, ok := lookupEnv(env)
			if !ok {
				return nil, nil
			}
			flagVal = v
		}
		l, err := normalform.ParseAddressList(flagVal)
		if err != nil {
			src := "--" + map[string]string{envWrapped: "wrapped-native", envRouters: "routers", envManagers: "pool-managers"}[env]
			if !set {
				src = env
			}
			return nil, fmt.Errorf("%s: %v", src, err)
		}
		return l, nil
	}
	w, err := list(c.wrapped, c.wrappedSet, envWrapped)
	if err != nil {
		return nil, err
	}
	r, err := list(c.routers, c.routersSet, envRouters)
	if err != nil {
		return nil, err
	}
	m, err := list(c.managers, c.managersSet, envManagers)
	if err != nil {
		return nil, err
	}
	cfg := normalform.NewConfig(ch, w, r)
	if m != nil {
		cfg.SetPoolManagers(m)
	}
	return cfg, nil
}

func chains(w io.Writer) int {
	ids := make([]uint64, 0, len(normalform.Networks))
	for id := range normalform.Networks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		c := normalform.Networks[id]
		var wn, rt []string
		for _, a := range c.WrappedNative {
			wn = append(wn, strings.ToLower(a.Hex()))
		}
		for _, a := range c.Routers {
			rt = append(rt, strings.ToLower(a.Hex()))
		}
		fmt.Fprintf(w, "%-9s %6d  native %-4s wrapped %s  routers %s\n", c.Name, c.ID, c.NativeSymbol, strings.Join(wn, ","), strings.Join(rt, ","))
	}
	return 0
}
