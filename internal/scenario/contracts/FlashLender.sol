// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "./FlowBase.sol";

interface IFlashBorrower {
    function onFlashLoan(uint256 amount, uint256 fee, bytes calldata data) external;
}

/// @title FlashLender: lends its token for the duration of a call, for a fee.
/// @notice flashLoan sends `amount` to the caller, calls its onFlashLoan and
/// requires its balance to have grown by the fee (feeBps of the amount)
/// when the callback returns: the borrower repays by transfer.
contract FlashLender {
    address public immutable token;
    uint256 public immutable feeBps;

    constructor(address token_, uint256 feeBps_) {
        token = token_;
        feeBps = feeBps_;
    }

    function flashLoan(uint256 amount, bytes calldata data) external {
        uint256 before = IFlowERC20(token).balanceOf(address(this));
        uint256 fee = amount * feeBps / 10_000;
        require(IFlowERC20(token).transfer(msg.sender, amount), "FlashLender: transfer failed");
        IFlashBorrower(msg.sender).onFlashLoan(amount, fee, data);
        require(IFlowERC20(token).balanceOf(address(this)) >= before + fee, "FlashLender: not repaid");
    }
}

/// @title FlashBorrower: borrows from a FlashLender and trades the loan.
/// @notice The owner calls run; in onFlashLoan the borrower routes the loan
/// through V2 pairs back to itself (no route: it trades nothing) and repays
/// the amount and the fee. The gain, if any, stays with the borrower.
contract FlashBorrower is Owned, V2Route {
    address transient activeLender;

    constructor(address owner_) Owned(owner_) {}

    function run(address lender, uint256 amount, Hop[] calldata hops) external onlyOwner {
        activeLender = lender;
        FlashLender(lender).flashLoan(amount, abi.encode(hops));
        activeLender = address(0);
    }

    function onFlashLoan(uint256 amount, uint256 fee, bytes calldata data) external {
        require(msg.sender == activeLender, "FlashBorrower: not our loan");
        Hop[] memory hops = abi.decode(data, (Hop[]));
        address token = FlashLender(msg.sender).token();
        if (hops.length > 0) {
            _route(token, amount, hops, address(this));
        }
        _send(token, msg.sender, amount + fee);
    }
}
