-- Apply one ledger op to the wallet projection, exactly once, and write it ahead.
-- Every key is in the wallet's shard (one hash slot):
-- KEYS[1] balance of the wallet (nano), KEYS[2] spend of the key (nano), KEYS[3] dedupe state,
-- KEYS[4] the shard's ledger journal (a stream drained to the Mongo ledger), KEYS[5] the account's
-- concurrency leases (released here when ARGV[11] names a member)
-- ARGV[1] balance delta, ARGV[2] key spend delta, ARGV[3] gate (1: refuse if the balance would go
-- below 0 or the key spend above its cap), ARGV[4] key cap (-1: none),
-- ARGV[5] dedupe mode:
--   'm': KEYS[3] is the op's marker; ARGV[6] its ttl in seconds (the caller shortens it once the
--        ledger row is written; capabilities/accounts/wallet.ts)
--   's': KEYS[3] is the writer's sequence window (hash: 'f' = floor, one field per applied
--        sequence number >= floor); ARGV[6] this op's sequence number, ARGV[7] the writer's floor
--        (every number below it is settled: applied, or never sent again), ARGV[8] window ttl ms
-- ARGV[9] journal entry, ARGV[10] '1' to flag the entry as a marked op (its drain shortens the marker)
-- ARGV[11] lease member ('' : none): the call's concurrency slot, freed in the same round trip
-- Returns {status, balance, key_spend, journal entry id}: status 1 applied, 0 already applied,
-- -1 refused, -2 projection not loaded.
if ARGV[11] ~= '' then redis.call('ZREM', KEYS[5], ARGV[11]) end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {-2, 0, 0, ''}
end
local bal = tonumber(redis.call('GET', KEYS[1]))
local spent = tonumber(redis.call('GET', KEYS[2]) or '0')
local seqMode = ARGV[5] == 's'
if seqMode then
  local seq = tonumber(ARGV[6])
  local floor = tonumber(ARGV[7])
  local f = tonumber(redis.call('HGET', KEYS[3], 'f') or '0')
  if floor > f then
    -- Numbers below the floor are settled for good: forget them, the floor remembers.
    local fields = redis.call('HKEYS', KEYS[3])
    for i = 1, #fields do
      local n = tonumber(fields[i])
      if n and n < floor then redis.call('HDEL', KEYS[3], fields[i]) end
    end
    redis.call('HSET', KEYS[3], 'f', ARGV[7])
    f = floor
  end
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[8]))
  if seq < f or redis.call('HEXISTS', KEYS[3], ARGV[6]) == 1 then
    return {0, bal, spent, ''}
  end
elseif redis.call('EXISTS', KEYS[3]) == 1 then
  return {0, bal, spent, ''}
end
local delta = tonumber(ARGV[1])
local kdelta = tonumber(ARGV[2])
if ARGV[3] == '1' then
  if bal + delta < 0 then return {-1, bal, spent, ''} end
  local cap = tonumber(ARGV[4])
  if cap >= 0 and spent + kdelta > cap then return {-1, bal, spent, ''} end
end
bal = redis.call('INCRBY', KEYS[1], delta)
if kdelta ~= 0 then spent = redis.call('INCRBY', KEYS[2], kdelta) end
if seqMode then
  redis.call('HSET', KEYS[3], ARGV[6], '1')
else
  redis.call('SET', KEYS[3], '1', 'EX', tonumber(ARGV[6]))
end
local id = ''
if ARGV[9] ~= '' then
  if ARGV[10] == '1' then
    id = redis.call('XADD', KEYS[4], '*', 'e', ARGV[9], 'm', '1')
  else
    id = redis.call('XADD', KEYS[4], '*', 'e', ARGV[9])
  end
end
return {1, bal, spent, id}
