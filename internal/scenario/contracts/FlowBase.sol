// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

// Shared pieces of the issue-14 scenario contracts: minimal interfaces of
// the real contracts they call (ERC-20, WETH9, Uniswap V2 pair, Uniswap V3
// pool), an owner check, and V2Route, the routing every searcher contract
// here uses: it pays a pair its input and has each pair pay the next one
// directly, the way MEV bots route through Uniswap V2 pairs. The amounts
// are computed off chain (by the scenario generator, from the pools'
// reserves), as searchers do.

interface IFlowERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
    function balanceOf(address who) external view returns (uint256);
}

interface IFlowWETH9 is IFlowERC20 {
    function deposit() external payable;
    function withdraw(uint256 amount) external;
}

interface IFlowV2Pair {
    function token0() external view returns (address);
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata data) external;
}

interface IFlowV3Pool {
    function swap(address recipient, bool zeroForOne, int256 amountSpecified, uint160 sqrtPriceLimitX96, bytes calldata data)
        external
        returns (int256 amount0, int256 amount1);
}

/// @notice Owned: one owner (an EOA or a contract) may call the entry points.
abstract contract Owned {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "not owner");
        _;
    }
}

/// @notice V2Route: pays and swaps through Uniswap V2 pairs.
abstract contract V2Route {
    /// @dev One hop: `pair` pays `amountOut` of `tokenOut` to the next hop's
    /// pair (or, for the last hop, to the route's recipient).
    struct Hop {
        address pair;
        address tokenOut;
        uint256 amountOut;
    }

    function _send(address token, address to, uint256 amount) internal {
        require(IFlowERC20(token).transfer(to, amount), "transfer failed");
    }

    function _pay(address to, uint256 amount) internal {
        (bool ok,) = to.call{value: amount}("");
        require(ok, "payment failed");
    }

    /// @dev pair.swap taking amountOut of tokenOut, paid to `to`; a non-empty
    /// `data` makes it a flash swap (the pair calls to.uniswapV2Call).
    function _swapOut(address pair, address tokenOut, uint256 amountOut, address to, bytes memory data) internal {
        if (IFlowV2Pair(pair).token0() == tokenOut) {
            IFlowV2Pair(pair).swap(amountOut, 0, to, data);
        } else {
            IFlowV2Pair(pair).swap(0, amountOut, to, data);
        }
    }

    /// @dev Pays amountIn of tokenIn to the first hop's pair; each pair pays
    /// the next; the last pays `to`.
    function _route(address tokenIn, uint256 amountIn, Hop[] memory hops, address to) internal {
        require(hops.length > 0, "empty route");
        _send(tokenIn, hops[0].pair, amountIn);
        for (uint256 i = 0; i < hops.length; i++) {
            address next = i + 1 < hops.length ? hops[i + 1].pair : to;
            _swapOut(hops[i].pair, hops[i].tokenOut, hops[i].amountOut, next, "");
        }
    }
}
