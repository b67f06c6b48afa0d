-- Load an account's projection computed from the ledger, unless one exists.
-- KEYS[1] balance key, KEYS[2..1+N] key-spend keys, KEYS[2+N..] op markers of recent ops
-- ARGV[1] balance (nano), ARGV[2] N, ARGV[3] marker ttl seconds, ARGV[4..3+N] key spends
-- Returns 1 when loaded, 0 when a projection already existed.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1])
for i = 1, n do redis.call('SET', KEYS[1 + i], ARGV[3 + i]) end
for i = 2 + n, #KEYS do redis.call('SET', KEYS[i], '1', 'EX', tonumber(ARGV[3])) end
return 1
