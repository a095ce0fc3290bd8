// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "./FlowBase.sol";

/// @title PoolFirstExecutor: flash swaps where the first pool pays first and
/// is repaid by the last pool of a route, in its own input token.
/// @notice The owner calls runV3 or runV2. runV3 asks a Uniswap V3 pool for
/// WETH (exact output, the executor as recipient); the pool pays the WETH,
/// then calls uniswapV3SwapCallback before it is paid. runV2 does the same
/// with a Uniswap V2 pair (swap with data: the pair pays, then calls
/// uniswapV2Call, and checks it was paid when the call returns). In the
/// callback the executor sells part of the WETH along a V2 route whose last
/// pair pays the first pool directly, in the token that pool takes in. The
/// executor keeps the rest of the WETH, then unwraps part of its gain, pays
/// the block's fee recipient (block.coinbase, the builder) and sends a
/// payout to the owner's wallet.
contract PoolFirstExecutor is Owned, V2Route {
    struct PlanV3 {
        address pool; // the V3 pool that pays first
        bool zeroForOne; // the swap's direction (selling the pool's input token)
        int256 amountSpecified; // negative: exact WETH out
        uint160 sqrtPriceLimitX96;
        uint256 wethIn; // WETH sold along the route inside the callback
        Hop[] hops; // the V2 route; its last pair pays the pool
        uint256 tip; // ETH to block.coinbase
        uint256 payout; // ETH to payee
        address payee; // the owner's wallet
    }

    struct PlanV2 {
        address pair; // the V2 pair that pays first
        uint256 wethOut; // WETH it pays
        uint256 wethIn;
        Hop[] hops;
        uint256 tip;
        uint256 payout;
        address payee;
    }

    address public immutable weth;
    address transient activePool;

    constructor(address owner_, address weth_) Owned(owner_) {
        weth = weth_;
    }

    function runV3(PlanV3 calldata p) external onlyOwner {
        uint256 before = IFlowERC20(weth).balanceOf(address(this));
        activePool = p.pool;
        IFlowV3Pool(p.pool).swap(address(this), p.zeroForOne, p.amountSpecified, p.sqrtPriceLimitX96, abi.encode(p.wethIn, p.hops));
        activePool = address(0);
        _distribute(before, p.tip, p.payout, p.payee);
    }

    function runV2(PlanV2 calldata p) external onlyOwner {
        uint256 before = IFlowERC20(weth).balanceOf(address(this));
        activePool = p.pair;
        _swapOut(p.pair, weth, p.wethOut, address(this), abi.encode(p.wethIn, p.hops));
        activePool = address(0);
        _distribute(before, p.tip, p.payout, p.payee);
    }

    /// @notice Called by the V3 pool after it has paid the WETH.
    function uniswapV3SwapCallback(int256, int256, bytes calldata data) external {
        require(msg.sender == activePool, "PoolFirstExecutor: not our pool");
        _repayByRoute(data);
    }

    /// @notice Called by the V2 pair after it has paid the WETH.
    function uniswapV2Call(address sender, uint256, uint256, bytes calldata data) external {
        require(msg.sender == activePool && sender == address(this), "PoolFirstExecutor: not our pair");
        _repayByRoute(data);
    }

    /// @dev Sells wethIn along the route; its last pair pays the first pool
    /// (msg.sender) what it is owed.
    function _repayByRoute(bytes calldata data) internal {
        (uint256 wethIn, Hop[] memory hops) = abi.decode(data, (uint256, Hop[]));
        _route(weth, wethIn, hops, msg.sender);
    }

    function _distribute(uint256 before, uint256 tip, uint256 payout, address payee) internal {
        uint256 gained = IFlowERC20(weth).balanceOf(address(this)) - before;
        require(gained > tip + payout, "PoolFirstExecutor: no profit");
        IFlowWETH9(weth).withdraw(tip + payout);
        _pay(block.coinbase, tip);
        _pay(payee, payout);
    }

    receive() external payable {}
}
