// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "./FlowBase.sol";

/// @title WrapArb: trades with the sender's ETH and gives it back.
/// @notice The owner sends ETH with run: the bot wraps it (WETH9.deposit),
/// routes the WETH through V2 pairs back to itself, unwraps the principal
/// and the tip, returns the principal to the sender, pays the tip to the
/// block's fee recipient and keeps the surplus in WETH.
contract WrapArb is Owned, V2Route {
    address public immutable weth;

    constructor(address owner_, address weth_) Owned(owner_) {
        weth = weth_;
    }

    function run(Hop[] calldata hops, uint256 tip) external payable onlyOwner {
        uint256 principal = msg.value;
        uint256 before = IFlowERC20(weth).balanceOf(address(this));
        IFlowWETH9(weth).deposit{value: principal}();
        _route(weth, principal, hops, address(this));
        require(IFlowERC20(weth).balanceOf(address(this)) > before + principal + tip, "WrapArb: no profit");
        IFlowWETH9(weth).withdraw(principal + tip);
        _pay(msg.sender, principal);
        _pay(block.coinbase, tip);
    }

    receive() external payable {}
}
