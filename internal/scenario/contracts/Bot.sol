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

/// @title Bot: flowq's scenario searcher contract.
/// @notice A data-driven executor, as MEV bots usually are: the owner sends a
/// list of actions (calls with value, a payment to the block's fee recipient,
/// a minimum-balance check) and the bot runs them in order. A Uniswap V2
/// pair that is asked to swap with a non-empty `data` calls uniswapV2Call on
/// the recipient; the bot then decodes `data` as a further list of actions,
/// so flash swaps and nested callback cascades (the paper's tx_R) are plain
/// data. Uniswap V3 pools call back msg.sender (uniswapV3SwapCallback,
/// uniswapV3MintCallback); the bot pays them what they are owed. Callbacks
/// are accepted only while the owner's execute is running (a transient
/// flag). The same code serves as an EIP-7702 delegation target: an EOA
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

    /// @notice Uniswap V3 swap callback: pays the pool the positive delta.
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata) external {
        require(running, "Bot: not our swap");
        if (amount0Delta > 0) _pay(IPoolTokens(msg.sender).token0(), uint256(amount0Delta));
        if (amount1Delta > 0) _pay(IPoolTokens(msg.sender).token1(), uint256(amount1Delta));
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
