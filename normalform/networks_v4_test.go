package normalform

import "testing"

// TestNetworksListV4Contracts checks that every built-in chain names its
// Uniswap V4 Universal Router (R5's default) and its PoolManager, each a
// single non-zero address and not the same contract.
func TestNetworksListV4Contracts(t *testing.T) {
	for id, n := range Networks {
		if len(n.Routers) != 1 || len(n.PoolManagers) != 1 {
			t.Errorf("chain %d (%s): %d routers and %d pool managers, want one of each", id, n.Name, len(n.Routers), len(n.PoolManagers))
			continue
		}
		if n.Routers[0] == (Address{}) || n.PoolManagers[0] == (Address{}) || n.Routers[0] == n.PoolManagers[0] {
			t.Errorf("chain %d (%s): router %s, pool manager %s", id, n.Name, n.Routers[0].Hex(), n.PoolManagers[0].Hex())
		}
	}
}
