// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "./FlowBase.sol";

/// @title Controller: dispatches trades to executors it controls.
/// @notice The owner calls dispatch; the controller calls the executor,
/// which trades with its own funds and keeps the gain, and checks the
/// executor's balance afterwards. The controller moves no value itself.
/// relay passes any call on to an executor owned by the controller; the
/// controller accepts ETH (an executor's payouts).
contract Controller is Owned {
    constructor(address owner_) Owned(owner_) {}

    function relay(address executor, bytes calldata data) external onlyOwner {
        (bool ok, bytes memory ret) = executor.call(data);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
    }

    receive() external payable {}

    function dispatch(address executor, address token, uint256 amountIn, V2Route.Hop[] calldata hops, uint256 minGain)
        external
        onlyOwner
    {
        uint256 before = IFlowERC20(token).balanceOf(executor);
        ArbExecutor(executor).arb(token, amountIn, hops);
        require(IFlowERC20(token).balanceOf(executor) >= before + minGain, "Controller: gain below minimum");
    }
}

/// @title ArbExecutor: runs a cycle for its controller.
/// @notice Only the controller may call arb: the executor pays the route's
/// first pair from its own balance and the last pair pays it back.
contract ArbExecutor is V2Route {
    address public immutable controller;

    constructor(address controller_) {
        controller = controller_;
    }

    function arb(address token, uint256 amountIn, Hop[] calldata hops) external {
        require(msg.sender == controller, "ArbExecutor: not the controller");
        _route(token, amountIn, hops, address(this));
    }
}
