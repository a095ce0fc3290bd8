// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Bot, IBalance, IToken, IPoolTokens} from "./Bot.sol";

/// @dev The parts of Uniswap V4's PoolManager (npm @uniswap/v4-core) the
/// bot calls. Currency and IHooks are addresses in the ABI; BalanceDelta is
/// an int256 (amount0 in the upper 128 bits, amount1 in the lower).
interface IV4PoolManager {
    struct PoolKey {
        address currency0;
        address currency1;
        uint24 fee;
        int24 tickSpacing;
        address hooks;
    }

    struct SwapParams {
        bool zeroForOne;
        int256 amountSpecified;
        uint160 sqrtPriceLimitX96;
    }

    function unlock(bytes calldata data) external returns (bytes memory);
    function swap(PoolKey memory key, SwapParams memory params, bytes calldata hookData) external returns (int256);
    function sync(address currency) external;
    function settle() external payable returns (uint256);
    function take(address currency, address to, uint256 amount) external;
    function exttload(bytes32 slot) external view returns (bytes32);
}

interface IV2PairSwap {
    function getReserves() external view returns (uint112, uint112, uint32);
    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata data) external;
}

/// @title V4Bot: flowq's Uniswap V4 searcher contract.
/// @notice The Bot (execute runs a list of actions) with Uniswap V4's unlock
/// callback: the owner's actions call PoolManager.unlock(abi.encode(Action[]))
/// and the manager calls back unlockCallback, which runs those actions while
/// the manager is unlocked for this contract. The helpers below are meant to
/// be such actions (a CALL of the bot itself): they size each step from the
/// manager's running deltas for this contract (read with exttload, as V4's
/// TransientStateLibrary does), so a route is plain data whose amounts follow
/// the pools, as a real searcher's would.
contract V4Bot is Bot {
    constructor(address owner_) Bot(owner_) {}

    /// @notice Uniswap V4's callback of unlock: `data` is abi.encode(Action[]).
    function unlockCallback(bytes calldata data) external returns (bytes memory) {
        require(running, "V4Bot: not our unlock");
        _run(abi.decode(data, (Action[])));
        return "";
    }

    /// @notice This contract's delta in `currency` at the manager (positive:
    /// the manager owes it; negative: it owes the manager).
    function delta(IV4PoolManager manager, address currency) public view returns (int256) {
        return int256(uint256(manager.exttload(keccak256(abi.encode(address(this), currency)))));
    }

    /// @notice Swaps on a V4 pool. amountSpecified < 0 is an exact input, > 0
    /// an exact output; 0 sells exactly what the manager owes this contract
    /// in the input currency (the previous hop's output).
    function swapV4(
        IV4PoolManager manager,
        IV4PoolManager.PoolKey calldata key,
        bool zeroForOne,
        int256 amountSpecified,
        uint160 sqrtPriceLimitX96
    ) external onlyOwner {
        if (amountSpecified == 0) {
            int256 credit = delta(manager, zeroForOne ? key.currency0 : key.currency1);
            require(credit > 0, "V4Bot: nothing to sell");
            amountSpecified = -credit;
        }
        manager.swap(key, IV4PoolManager.SwapParams(zeroForOne, amountSpecified, sqrtPriceLimitX96), "");
    }

    /// @notice Takes everything the manager owes this contract in `currency`,
    /// paid to `to`.
    function takeAll(IV4PoolManager manager, address currency, address to) external onlyOwner {
        int256 d = delta(manager, currency);
        require(d > 0, "V4Bot: nothing to take");
        manager.take(currency, to, uint256(d));
    }

    /// @notice Pays the manager everything this contract owes it in
    /// `currency`: with the call's value for the native currency, else by
    /// sync, transfer and settle.
    function settleAll(IV4PoolManager manager, address currency) external onlyOwner {
        int256 d = delta(manager, currency);
        require(d < 0, "V4Bot: nothing owed");
        uint256 owed = uint256(-d);
        if (currency == address(0)) {
            manager.settle{value: owed}();
        } else {
            manager.sync(currency);
            require(IToken(currency).transfer(address(manager), owed), "V4Bot: transfer failed");
            manager.settle();
        }
    }

    /// @notice Sells on a Uniswap V2 pair whatever of tokenIn was paid to it
    /// beyond its reserve (the previous step paid it directly), the output
    /// paid to `to` (UniswapV2Library's getAmountOut, 0.3% fee).
    function v2SwapPaid(IV2PairSwap pair, address tokenIn, address to) external onlyOwner {
        (uint112 r0, uint112 r1,) = pair.getReserves();
        bool zeroIn = IPoolTokens(address(pair)).token0() == tokenIn;
        (uint256 rIn, uint256 rOut) = zeroIn ? (uint256(r0), uint256(r1)) : (uint256(r1), uint256(r0));
        uint256 amountIn = IBalance(tokenIn).balanceOf(address(pair)) - rIn;
        uint256 inFee = amountIn * 997;
        uint256 out = (inFee * rOut) / (rIn * 1000 + inFee);
        (uint256 a0, uint256 a1) = zeroIn ? (uint256(0), out) : (out, uint256(0));
        pair.swap(a0, a1, to, "");
    }
}
