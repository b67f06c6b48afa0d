-- Authentication state and the account's rate limits in one round trip.
-- KEYS[1] key record, KEYS[2] account record, KEYS[3] balance, KEYS[4] key spend,
-- KEYS[5] rpm window zset, KEYS[6] concurrency lease zset
-- ARGV[1] member (request id), ARGV[2] lease ms, ARGV[3] '1' to apply rate limits
-- Returns {key json, account json, balance, key spend, limited?, allowed, reason, rpm, conc, rpm used, conc used, reset ms}
local keyJson = redis.call('GET', KEYS[1])
local accJson = redis.call('GET', KEYS[2])
local bal = redis.call('GET', KEYS[3])
local spend = redis.call('GET', KEYS[4])
local out = {keyJson or false, accJson or false, bal or false, spend or false, 0, 1, '', 0, 0, 0, 0, 0}
if ARGV[3] ~= '1' or not keyJson or not accJson then return out end
local key = cjson.decode(keyJson)
local acc = cjson.decode(accJson)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Only a key that authenticates spends the account's limits.
if key.deleted or not key.enabled or acc.status ~= 'active' then return out end
if type(key.expires_at) == 'number' and key.expires_at <= now then return out end
local rpm = type(acc.rpm) == 'number' and acc.rpm or 0
local conc = type(acc.concurrency) == 'number' and acc.concurrency or 0
if rpm == 0 and conc == 0 then return out end
out[5] = 1
out[8] = rpm
out[9] = conc
local lease = tonumber(ARGV[2])
local rpm_used, conc_used, reset = 0, 0, 0
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - 60000)
  rpm_used = redis.call('ZCARD', KEYS[5])
  local oldest = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  if oldest[2] then reset = 60000 - (now - tonumber(oldest[2])) end
  if rpm_used >= rpm then
    out[6] = 0; out[7] = 'rpm'; out[10] = rpm_used; out[12] = reset
    return out
  end
end
if conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
  conc_used = redis.call('ZCARD', KEYS[6])
  if conc_used >= conc then
    out[6] = 0; out[7] = 'concurrency'; out[10] = rpm_used; out[11] = conc_used; out[12] = 1000
    return out
  end
end
if rpm > 0 then
  redis.call('ZADD', KEYS[5], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[5], 61000)
  rpm_used = rpm_used + 1
  if reset == 0 then reset = 60000 end
end
if conc > 0 then
  redis.call('ZADD', KEYS[6], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[6], lease + 1000)
  conc_used = conc_used + 1
end
out[10] = rpm_used
out[11] = conc_used
out[12] = reset
return out
