// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "./FlowBase.sol";

/// @title SandwichBot: the two legs a sandwich bot sends around a victim.
/// @notice buy pays `amountIn` of tokenIn to a V2 pair and takes what the
/// pair's reserves give (UniswapV2Library.getAmountOut), at least minOut;
/// sell does the same with the bot's whole balance of tokenIn. Each is its
/// own transaction: the front-run before the victim's swap, the back-run
/// after it.
contract SandwichBot is Owned, V2Route {
    constructor(address owner_) Owned(owner_) {}

    function buy(address pair, address tokenIn, address tokenOut, uint256 amountIn, uint256 minOut) external onlyOwner {
        _swapIn(pair, tokenIn, tokenOut, amountIn, minOut);
    }

    function sell(address pair, address tokenIn, address tokenOut, uint256 minOut) external onlyOwner {
        _swapIn(pair, tokenIn, tokenOut, IFlowERC20(tokenIn).balanceOf(address(this)), minOut);
    }

    function _swapIn(address pair, address tokenIn, address tokenOut, uint256 amountIn, uint256 minOut) internal {
        (uint256 r0, uint256 r1,) = IFlowV2Pair(pair).getReserves();
        (uint256 rIn, uint256 rOut) = IFlowV2Pair(pair).token0() == tokenIn ? (r0, r1) : (r1, r0);
        uint256 inFee = amountIn * 997;
        uint256 out = inFee * rOut / (rIn * 1000 + inFee);
        require(out >= minOut, "SandwichBot: slippage");
        _send(tokenIn, pair, amountIn);
        _swapOut(pair, tokenOut, out, address(this), "");
    }
}
