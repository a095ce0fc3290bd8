// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "./FlowBase.sol";

/// @title PayoutBot: a bot that pays part of its gain to a cold wallet.
/// @notice The owner calls run: the bot routes its own tokens through V2
/// pairs back to itself and, in the same transaction, sends `payout` of the
/// token it gained to the cold wallet.
contract PayoutBot is Owned, V2Route {
    constructor(address owner_) Owned(owner_) {}

    function run(address token, uint256 amountIn, Hop[] calldata hops, address cold, uint256 payout) external onlyOwner {
        uint256 before = IFlowERC20(token).balanceOf(address(this));
        _route(token, amountIn, hops, address(this));
        require(IFlowERC20(token).balanceOf(address(this)) > before + payout, "PayoutBot: gain below payout");
        _send(token, cold, payout);
    }
}
