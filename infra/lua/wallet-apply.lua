-- Apply one ledger op to the wallet projection, exactly once per op id.
-- KEYS[1] balance of the account (nano), KEYS[2] op marker, KEYS[3] spend of the key (nano),
-- KEYS[4] the ledger journal (a stream drained to the Mongo ledger)
-- ARGV[1] balance delta, ARGV[2] key spend delta, ARGV[3] gate (1: refuse if the
-- balance would go below 0 or the key spend above its cap), ARGV[4] key cap (-1: none),
-- ARGV[5] marker ttl seconds, ARGV[6] journal entry ('' : none; the caller records the op itself)
-- Returns {status, balance, key_spend}: 1 applied, 0 already applied, -1 refused, -2 projection not loaded.
-- With an entry, the projection moves and the op is written ahead in the same atomic step:
-- a charge the projection shows is never missing from the journal, and a replay appends nothing.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {-2, 0, 0}
end
local bal = tonumber(redis.call('GET', KEYS[1]))
local spent = tonumber(redis.call('GET', KEYS[3]) or '0')
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {0, bal, spent}
end
local delta = tonumber(ARGV[1])
local kdelta = tonumber(ARGV[2])
if ARGV[3] == '1' then
  if bal + delta < 0 then return {-1, bal, spent} end
  local cap = tonumber(ARGV[4])
  if cap >= 0 and spent + kdelta > cap then return {-1, bal, spent} end
end
bal = redis.call('INCRBY', KEYS[1], delta)
if kdelta ~= 0 then spent = redis.call('INCRBY', KEYS[3], kdelta) end
redis.call('SET', KEYS[2], '1', 'EX', tonumber(ARGV[5]))
if ARGV[6] ~= '' then redis.call('XADD', KEYS[4], '*', 'e', ARGV[6]) end
return {1, bal, spent}
