// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title LogPay: a ticket seller that logs and pays ETH in one frame.
/// @notice buy mints the caller tickets for the ETH it sends and forwards the
/// ETH to the payee. buyLogThenPay emits the ticket's Transfer before the
/// value call to the payee, buyPayThenLog after it: the two orders the
/// Parity trace shape (trace_* with receipts) cannot tell apart, since the
/// payee's call emits no log (issue 17: V4's PositionManager logs the
/// position NFT's mint before it settles ETH with a value call).
contract LogPay {
    event Transfer(address indexed from, address indexed to, uint256 value);

    address public immutable payee;
    mapping(address => uint256) public balanceOf;

    constructor(address payee_) {
        payee = payee_;
    }

    function buyLogThenPay() external payable {
        balanceOf[msg.sender] += msg.value;
        emit Transfer(address(0), msg.sender, msg.value);
        _pay();
    }

    function buyPayThenLog() external payable {
        balanceOf[msg.sender] += msg.value;
        _pay();
        emit Transfer(address(0), msg.sender, msg.value);
    }

    function _pay() private {
        (bool ok, ) = payee.call{value: msg.value}("");
        require(ok, "LogPay: payee refused");
    }
}
