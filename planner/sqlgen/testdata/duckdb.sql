-- find arbitrages where net profit > 0.05 WETH order by net profit desc limit 5
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons FROM lake WHERE verdict = 'arbitrage' AND (costs_known AND coalesce(list_filter(net, x -> x.token = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee')[1].amount_key, from_hex('010000000000000000000000000000000000000000000000000000000000000000')) > from_hex('0100000000000000000000000000000000000000000000000000b1a2bc2ec50000')) ORDER BY coalesce(list_filter(net, x -> x.token = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee')[1].amount_key, from_hex('010000000000000000000000000000000000000000000000000000000000000000')) DESC, block, coalesce(tx_index, 4294967295), tx_hash LIMIT 5;

-- find where gross profit in 0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2 >= 1000 and pools >= 3 and not has reason leftovers
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons FROM lake WHERE ((coalesce(list_filter(gross, x -> x.token = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2')[1].amount_key, from_hex('010000000000000000000000000000000000000000000000000000000000000000')) >= from_hex('0100000000000000000000000000000000000000000000000000000000000003e8') AND pools >= 3) AND NOT list_contains(reasons, 'leftovers')) ORDER BY block, coalesce(tx_index, 4294967295), tx_hash;

-- find where touches USDC or touches 0x31ff89753286d7a7284086ad1ee2d98594ab31a0
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons FROM lake WHERE (list_contains(tokens, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48') OR (list_contains(addresses, '0x31ff89753286d7a7284086ad1ee2d98594ab31a0') OR list_contains(token_addresses, '0x31ff89753286d7a7284086ad1ee2d98594ab31a0'))) ORDER BY block, coalesce(tx_index, 4294967295), tx_hash;

-- find where sender != 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 and bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 and blocks 70..80
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons FROM lake WHERE ((NOT coalesce(from_address = '0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74', false) AND bot = '0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74') AND block BETWEEN 70 AND 80) ORDER BY block, coalesce(tx_index, 4294967295), tx_hash;

-- find where tier = attempted and mode = receipts and path = rotation and flashloan order by block desc
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons FROM lake WHERE ((((verdict = 'warning' AND tier = 'attempted') AND mode = 'receipts') AND path = 'rotation') AND flash_loan) ORDER BY block DESC, coalesce(tx_index, 4294967295) DESC, tx_hash;

-- find where family = 0xa009e979e2fbd1edc8c7caedfb704dddf9181cfca18dd04059547acf8de47527 and block < 100
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons FROM lake WHERE (hash_family = '0xa009e979e2fbd1edc8c7caedfb704dddf9181cfca18dd04059547acf8de47527' AND block < 100) ORDER BY block, coalesce(tx_index, 4294967295), tx_hash;

-- count shapes by bot where verdict = arbitrage limit 3
SELECT bot AS k, count(DISTINCT hash_shape) AS n, count(*) AS txs, arg_min(tx_hash, (block, coalesce(tx_index, 4294967295), tx_hash)) AS example FROM lake WHERE verdict = 'arbitrage' GROUP BY k ORDER BY n DESC, k LIMIT 3;

-- count by block
SELECT CAST(block AS VARCHAR) AS k, count(*) AS n, count(*) AS txs, arg_min(tx_hash, (block, coalesce(tx_index, 4294967295), tx_hash)) AS example FROM lake GROUP BY k ORDER BY n DESC, k;

-- match 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa at family where pools >= 2
SELECT hash_family FROM lake WHERE tx_hash = '0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa';
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons FROM lake WHERE hash_family = (SELECT hash_family FROM lake WHERE tx_hash = '0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa') AND pools >= 2 ORDER BY block, coalesce(tx_index, 4294967295), tx_hash;

-- anomalies for bot 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons, hash_shape, first_block FROM (SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons, hash_shape, min(block) OVER (PARTITION BY hash_shape) AS first_block, row_number() OVER (PARTITION BY hash_shape ORDER BY block, coalesce(tx_index, 4294967295), tx_hash) AS in_shape, row_number() OVER (ORDER BY block, coalesce(tx_index, 4294967295), tx_hash) AS in_bot FROM lake WHERE bot = '0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74') AS t WHERE in_shape = 1 AND in_bot > 1 ORDER BY block, coalesce(tx_index, 4294967295), tx_hash;

-- anomalies for bot 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 since block 75 limit 2
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons, hash_shape, first_block FROM (SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons, hash_shape, min(block) OVER (PARTITION BY hash_shape) AS first_block, row_number() OVER (PARTITION BY hash_shape ORDER BY block, coalesce(tx_index, 4294967295), tx_hash) AS in_shape, row_number() OVER (ORDER BY block, coalesce(tx_index, 4294967295), tx_hash) AS in_bot FROM lake WHERE bot = '0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74') AS t WHERE block >= 75 AND first_block >= 75 ORDER BY block, coalesce(tx_index, 4294967295), tx_hash LIMIT 2;

-- anomalies for bot 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 baseline blocks 70..74
SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons, hash_shape, first_block FROM (SELECT tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons, hash_shape, min(block) OVER (PARTITION BY hash_shape) AS first_block, row_number() OVER (PARTITION BY hash_shape ORDER BY block, coalesce(tx_index, 4294967295), tx_hash) AS in_shape, row_number() OVER (ORDER BY block, coalesce(tx_index, 4294967295), tx_hash) AS in_bot FROM lake WHERE bot = '0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74') AS t WHERE block > 74 AND hash_shape NOT IN (SELECT hash_shape FROM lake WHERE bot = '0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74' AND block BETWEEN 70 AND 74) ORDER BY block, coalesce(tx_index, 4294967295), tx_hash;

-- same 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa 0x68b13bc05b6e29566d5e8148af022d9d38fd35f8ea342b403ff3e4fdc4011f06 at shape
SELECT tx_hash, nf FROM lake WHERE tx_hash IN ('0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa', '0x68b13bc05b6e29566d5e8148af022d9d38fd35f8ea342b403ff3e4fdc4011f06');

-- show 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa
SELECT tx_hash, nf FROM lake WHERE tx_hash = '0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa';

