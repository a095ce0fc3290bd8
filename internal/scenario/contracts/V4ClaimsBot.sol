// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {V4Bot, IV4PoolManager} from "./V4Bot.sol";

/// @dev The PoolManager's ERC-6909 claims (npm @uniswap/v4-core ERC6909Claims):
/// mint and burn move this contract's delta by the amount, the id is the
/// currency's address.
interface IV4Claims {
    function mint(address to, uint256 id, uint256 amount) external;
    function burn(address from, uint256 id, uint256 amount) external;
    function balanceOf(address owner, uint256 id) external view returns (uint256);
}

/// @title V4ClaimsBot: the V4 searcher settling through ERC-6909 claims.
/// @notice V4Bot's actions, and two more: mintAll keeps what the manager owes
/// this contract in a currency as claims (an ERC-6909 mint to itself), and
/// burnAll burns every claim it holds in a currency, so that a later take
/// pays it out. An arbitrage run in one unlock and kept as claims shows no
/// token movement but the mint; the payout comes in a later transaction.
contract V4ClaimsBot is V4Bot {
    constructor(address owner_) V4Bot(owner_) {}

    function mintAll(IV4PoolManager manager, address currency) external onlyOwner {
        int256 d = delta(manager, currency);
        require(d > 0, "V4ClaimsBot: nothing owed to mint");
        IV4Claims(address(manager)).mint(address(this), uint256(uint160(currency)), uint256(d));
    }

    function burnAll(IV4PoolManager manager, address currency) external onlyOwner {
        uint256 id = uint256(uint160(currency));
        uint256 held = IV4Claims(address(manager)).balanceOf(address(this), id);
        require(held > 0, "V4ClaimsBot: no claims");
        IV4Claims(address(manager)).burn(address(this), id, held);
    }
}
