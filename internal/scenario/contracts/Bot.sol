// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

interface IBalance {
    function balanceOf(address who) external view returns (uint256);
}

interface IToken {
    function transfer(address to, uint256 amount) external returns (bool);
}

interface IPoolTokens {
    function token0() external view returns (address);
    function token1() external view returns (address);
}

interface IUniswapV3PoolSwap {
    function swap(address recipient, bool zeroForOne, int256 amountSpecified, uint160 sqrtPriceLimitX96, bytes calldata data)
        external
        returns (int256 amount0, int256 amount1);
}

/// @title Bot: flowq's scenario searcher contract.
/// @notice A data-driven executor, as MEV bots usually are: the owner sends a
/// list of actions (calls with value, a payment to the block's fee recipient,
/// a minimum-balance check) and the bot runs them in order. A Uniswap V2
/// pair that is asked to swap with a non-empty `data` calls uniswapV2Call on
/// the recipient; the bot then decodes `data` as a further list of actions,
/// so flash swaps and nested callback cascades (the paper's tx_R) are plain
/// data. Uniswap V3 pools pay the swap's `recipient` and call back msg.sender
/// (uniswapV3SwapCallback, uniswapV3MintCallback): with an empty `data` the
/// bot pays them what they are owed; with `data` = abi.encode(Action[]) it
/// runs the actions instead, which must leave the pool paid. That is how the
/// paper's tx_R is built: each pool pays the next pool directly (the swap's
/// recipient) and calls back the bot, whose actions make other pools pay
/// it. Callbacks are accepted only while the owner's execute is running (a
/// transient flag). quoteV3 prices a V3 swap as Uniswap's Quoter does (for
/// eth_call). The same code serves as an EIP-7702 delegation target: an EOA
/// that delegates to it and calls itself passes the `address(this)` check.
contract Bot {
    struct Action {
        uint8 kind; // CALL, COINBASE or MIN_BALANCE
        address target; // callee (CALL) or token (MIN_BALANCE)
        uint256 value; // wei sent (CALL, COINBASE) or minimum balance (MIN_BALANCE)
        bytes data; // call data (CALL)
    }

    uint8 internal constant CALL = 0;
    uint8 internal constant COINBASE = 1;
    uint8 internal constant MIN_BALANCE = 2;

    address public owner;
    bool transient running;
    bool transient quoting;

    constructor(address owner_) {
        owner = owner_;
    }

    modifier onlyOwner() {
        require(msg.sender == owner || msg.sender == address(this), "Bot: not owner");
        _;
    }

    /// @notice Runs the actions in order; reverts the whole transaction when
    /// one of them fails.
    function execute(Action[] calldata actions) external payable onlyOwner {
        running = true;
        _run(abi.decode(abi.encode(actions), (Action[])));
        running = false;
    }

    /// @notice Uniswap V2 flash-swap callback: `data` is abi.encode(Action[]).
    function uniswapV2Call(address sender, uint256, uint256, bytes calldata data) external {
        require(running && sender == address(this), "Bot: not our swap");
        _run(abi.decode(data, (Action[])));
    }

    /// @notice Uniswap V3 swap callback. With an empty `data` it pays the
    /// pool the positive delta; otherwise `data` is abi.encode(Action[]) and
    /// the actions run instead (they must leave the pool paid, as when other
    /// pools pay it directly). While quoteV3 runs, it reverts with the deltas.
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external {
        if (quoting) {
            assembly {
                let p := mload(0x40)
                mstore(p, amount0Delta)
                mstore(add(p, 32), amount1Delta)
                revert(p, 64)
            }
        }
        require(running, "Bot: not our swap");
        if (data.length > 0) {
            _run(abi.decode(data, (Action[])));
            return;
        }
        if (amount0Delta > 0) _pay(IPoolTokens(msg.sender).token0(), uint256(amount0Delta));
        if (amount1Delta > 0) _pay(IPoolTokens(msg.sender).token1(), uint256(amount1Delta));
    }

    /// @notice Quotes a Uniswap V3 swap without making it, as Uniswap's
    /// Quoter does: the pool's callback reverts with the deltas, which are
    /// returned (positive: owed to the pool; negative: paid by it). Meant
    /// for eth_call; it changes no state.
    function quoteV3(address pool, bool zeroForOne, int256 amountSpecified, uint160 sqrtPriceLimitX96)
        external
        returns (int256 amount0, int256 amount1)
    {
        quoting = true;
        try IUniswapV3PoolSwap(pool).swap(address(this), zeroForOne, amountSpecified, sqrtPriceLimitX96, "") {
            revert("Bot: the pool did not call back");
        } catch (bytes memory reason) {
            quoting = false;
            if (reason.length != 64) {
                assembly {
                    revert(add(reason, 32), mload(reason))
                }
            }
            (amount0, amount1) = abi.decode(reason, (int256, int256));
        }
    }

    /// @notice Uniswap V3 mint callback: pays the pool the liquidity's tokens.
    function uniswapV3MintCallback(uint256 owed0, uint256 owed1, bytes calldata) external {
        require(running, "Bot: not our mint");
        if (owed0 > 0) _pay(IPoolTokens(msg.sender).token0(), owed0);
        if (owed1 > 0) _pay(IPoolTokens(msg.sender).token1(), owed1);
    }

    function _pay(address token, uint256 amount) internal {
        require(IToken(token).transfer(msg.sender, amount), "Bot: transfer failed");
    }

    function _run(Action[] memory actions) internal {
        for (uint256 i = 0; i < actions.length; i++) {
            Action memory a = actions[i];
            if (a.kind == CALL) {
                (bool ok, bytes memory ret) = a.target.call{value: a.value}(a.data);
                if (!ok) {
                    assembly {
                        revert(add(ret, 32), mload(ret))
                    }
                }
            } else if (a.kind == COINBASE) {
                (bool ok,) = block.coinbase.call{value: a.value}("");
                require(ok, "Bot: coinbase payment failed");
            } else if (a.kind == MIN_BALANCE) {
                require(IBalance(a.target).balanceOf(address(this)) >= a.value, "Bot: no profit");
            } else {
                revert("Bot: unknown action");
            }
        }
    }

    receive() external payable {}
}
