// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Executor: a forwarding contract owned by an EOA.
/// @notice It calls a strategy contract on its owner's behalf and moves no
/// value itself: in the scenario "inner_cycle" the arbitrage's cycle closes
/// at the strategy (a Bot owned by this Executor), not at the transaction's
/// recipient.
contract Executor {
    address public owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function forward(address target, bytes calldata data) external returns (bytes memory) {
        require(msg.sender == owner, "Executor: not owner");
        (bool ok, bytes memory ret) = target.call(data);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }
}
