package scenario

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// SetupCommand is what makes the artifacts: `make test` runs it first.
const SetupCommand = "make scenario-setup (run by make test): cd internal/scenario/npm && npm ci --no-audit --no-fund && node compile.js"

// Artifact is a compiled contract: its ABI, creation code and runtime code.
type Artifact struct {
	Name     string
	Source   string // where it was read from, relative to the npm directory
	ABI      abi.ABI
	Bytecode []byte
	Runtime  []byte
}

// artifactFiles names the contracts the scenarios use and the build files
// they come from (under the npm directory). The Uniswap (V2 and V3), WETH9 and
// OpenZeppelin builds are the npm packages' own, unmodified; Bot,
// Executor and the rest of build/ are this project's (contracts/*.sol),
// compiled by compile.js.
var artifactFiles = map[string]string{
	"UniswapV2Factory":               "node_modules/@uniswap/v2-core/build/UniswapV2Factory.json",
	"UniswapV2Pair":                  "node_modules/@uniswap/v2-core/build/UniswapV2Pair.json",
	"UniswapV2Router02":              "node_modules/@uniswap/v2-periphery/build/UniswapV2Router02.json",
	"WETH9":                          "node_modules/@uniswap/v2-periphery/build/WETH9.json",
	"ERC20":                          "node_modules/@uniswap/v2-periphery/build/ERC20.json",
	"ERC20PresetFixedSupply":         "node_modules/@openzeppelin/contracts/build/contracts/ERC20PresetFixedSupply.json",
	"ERC721PresetMinterPauserAutoId": "node_modules/@openzeppelin/contracts/build/contracts/ERC721PresetMinterPauserAutoId.json",
	"ERC1155PresetMinterPauser":      "node_modules/@openzeppelin/contracts/build/contracts/ERC1155PresetMinterPauser.json",
	"UniswapV3Factory":               "node_modules/@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json",
	"UniswapV3Pool":                  "node_modules/@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
	"Bot":                            "build/Bot.json",
	"Executor":                       "build/Executor.json",
	// The issue-14 scenarios' contracts (contracts/*.sol, compile.js).
	"PoolFirstExecutor": "build/PoolFirstExecutor.json",
	"FlashCascade":      "build/FlashCascade.json",
	"WrapArb":           "build/WrapArb.json",
	"Controller":        "build/Controller.json",
	"ArbExecutor":       "build/ArbExecutor.json",
	"PayoutBot":         "build/PayoutBot.json",
	"FlashLender":       "build/FlashLender.json",
	"FlashBorrower":     "build/FlashBorrower.json",
	"SandwichBot":       "build/SandwichBot.json",
	// Issue 17: Uniswap V4's PoolManager and its test routers, as built by
	// @uniswap/v4-core (Foundry's out/), and the V4 searcher.
	"PoolManager":             "node_modules/@uniswap/v4-core/out/PoolManager.sol/PoolManager.json",
	"PoolSwapTest":            "node_modules/@uniswap/v4-core/out/PoolSwapTest.sol/PoolSwapTest.json",
	"PoolModifyLiquidityTest": "node_modules/@uniswap/v4-core/out/PoolModifyLiquidityTest.sol/PoolModifyLiquidityTest.json",
	"V4Bot":                   "build/V4Bot.json",
	// The fourth phase: V4's PositionManager (@uniswap/v4-periphery,
	// Foundry's foundry-out/) and the Universal Router
	// (@uniswap/universal-router, Hardhat's artifacts/).
	"PositionManager": "node_modules/@uniswap/v4-periphery/foundry-out/PositionManager.sol/PositionManager.json",
	"UniversalRouter": "node_modules/@uniswap/universal-router/artifacts/contracts/UniversalRouter.sol/UniversalRouter.json",
	// The fifth phase (order.go): a log and a value call in one frame.
	"LogPay":      "build/LogPay.json",
	"V4ClaimsBot": "build/V4ClaimsBot.json",
}

// NPMDir is the directory holding package.json, node_modules and build:
// $FLOWQ_SCENARIO_NPM when set, else internal/scenario/npm beside this
// source file.
func NPMDir() string {
	if d := os.Getenv("FLOWQ_SCENARIO_NPM"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("internal", "scenario", "npm")
	}
	return filepath.Join(filepath.Dir(file), "npm")
}

// LoadArtifacts reads every contract the scenarios need from dir (NPMDir).
// When they are missing it says how to make them.
func LoadArtifacts(dir string) (map[string]*Artifact, error) {
	out := map[string]*Artifact{}
	var missing []string
	for name, rel := range artifactFiles {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if os.IsNotExist(err) {
			missing = append(missing, rel)
			continue
		}
		if err != nil {
			return nil, err
		}
		a, err := parseArtifact(name, rel, data)
		if err != nil {
			return nil, err
		}
		out[name] = a
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("scenario contracts are missing from %s (%s): run the setup first: %s", dir, strings.Join(missing, ", "), SetupCommand)
	}
	return out, nil
}

// parseArtifact reads the four layouts in use: Waffle's (Uniswap V2 and
// V3: "bytecode" and "evm.deployedBytecode.object", hex without 0x),
// Hardhat's (OpenZeppelin: "bytecode", "deployedBytecode", with 0x),
// Foundry's (Uniswap V4: "bytecode.object", "deployedBytecode.object") and
// compile.js's (as Hardhat's).
func parseArtifact(name, src string, data []byte) (*Artifact, error) {
	var raw struct {
		ABI              json.RawMessage `json:"abi"`
		Bytecode         json.RawMessage `json:"bytecode"`
		DeployedBytecode json.RawMessage `json:"deployedBytecode"`
		EVM              struct {
			Bytecode struct {
				Object string `json:"object"`
			} `json:"bytecode"`
			DeployedBytecode struct {
				Object string `json:"object"`
			} `json:"deployedBytecode"`
		} `json:"evm"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	parsed, err := abi.JSON(strings.NewReader(string(raw.ABI)))
	if err != nil {
		return nil, fmt.Errorf("%s: abi: %w", src, err)
	}
	code := func(field json.RawMessage, fallback string) ([]byte, error) {
		s := fallback
		if len(field) > 0 && field[0] == '"' {
			_ = json.Unmarshal(field, &s)
		}
		if len(field) > 0 && field[0] == '{' {
			var obj struct {
				Object string `json:"object"`
			}
			if err := json.Unmarshal(field, &obj); err != nil {
				return nil, err
			}
			s = obj.Object
		}
		if s == "" {
			return nil, nil
		}
		if !strings.HasPrefix(s, "0x") {
			s = "0x" + s
		}
		return hexutil.Decode(s)
	}
	bc, err := code(raw.Bytecode, raw.EVM.Bytecode.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: bytecode: %w", src, err)
	}
	rt, err := code(raw.DeployedBytecode, raw.EVM.DeployedBytecode.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: deployed bytecode: %w", src, err)
	}
	if len(bc) == 0 {
		return nil, fmt.Errorf("%s: no bytecode", src)
	}
	return &Artifact{Name: name, Source: src, ABI: parsed, Bytecode: bc, Runtime: rt}, nil
}

// MainnetWETH is where the scenarios' WETH9 lives: the mainnet WETH9
// address, placed in the genesis with WETH9's runtime code from the npm
// build, so that flowq's default configuration (Ethereum) treats it as the
// wrapped native token.
var MainnetWETH = common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")
