-- Load a wallet's projection computed from its checkpoint and the ledger rows after it, unless one exists.
-- All keys in the wallet's shard. KEYS[1] balance, KEYS[2..1+N] key-spend keys,
-- KEYS[2+N..] sequence windows of chat charges the ledger holds but whose writer may still be
-- settling (rows written straight to the ledger while Redis was out), one key per row.
-- ARGV[1] balance (nano), ARGV[2] N, ARGV[3] window ttl ms, ARGV[4..3+N] key spends,
-- ARGV[4+N..] the sequence number of each window key.
-- Returns 1 when loaded, 0 when a projection already existed.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1])
for i = 1, n do redis.call('SET', KEYS[1 + i], ARGV[3 + i]) end
for i = 2 + n, #KEYS do
  redis.call('HSET', KEYS[i], ARGV[2 + i], '1')
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[3]))
end
return 1
