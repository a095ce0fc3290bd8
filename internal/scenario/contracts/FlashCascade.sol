// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "./FlowBase.sol";

/// @title FlashCascade: nested Uniswap V2 flash swaps.
/// @notice The owner calls run with a list of loans. Loan 0 is a flash swap
/// (pair.swap with data, the cascade as recipient): the pair pays first and
/// calls uniswapV2Call; in the callback of loan i the cascade makes the
/// payments `pre`, takes loan i+1 (nested) and, once it returns, makes the
/// payments `post`. Each pair checks that it is paid when its own callback
/// returns, so a loan can be repaid anywhere inside its callback: in `post`
/// of its own callback (the first borrowed is repaid last), or in `pre` of
/// a deeper one (the first borrowed is repaid first). What is left over
/// stays with the cascade.
contract FlashCascade is Owned, V2Route {
    struct Payment {
        address token;
        address to;
        uint256 amount;
    }

    struct Loan {
        address pair;
        address tokenOut;
        uint256 amountOut;
        Payment[] pre;
        Payment[] post;
    }

    bool transient running;

    constructor(address owner_) Owned(owner_) {}

    function run(Loan[] calldata loans) external onlyOwner {
        running = true;
        _borrow(0, abi.decode(abi.encode(loans), (Loan[])));
        running = false;
    }

    function uniswapV2Call(address sender, uint256, uint256, bytes calldata data) external {
        require(running && sender == address(this), "FlashCascade: not our swap");
        (uint256 i, Loan[] memory loans) = abi.decode(data, (uint256, Loan[]));
        require(msg.sender == loans[i].pair, "FlashCascade: wrong pair");
        _payAll(loans[i].pre);
        if (i + 1 < loans.length) {
            _borrow(i + 1, loans);
        }
        _payAll(loans[i].post);
    }

    function _borrow(uint256 i, Loan[] memory loans) internal {
        _swapOut(loans[i].pair, loans[i].tokenOut, loans[i].amountOut, address(this), abi.encode(i, loans));
    }

    function _payAll(Payment[] memory ps) internal {
        for (uint256 j = 0; j < ps.length; j++) {
            _send(ps[j].token, ps[j].to, ps[j].amount);
        }
    }
}
