-- Sliding-window requests-per-minute and concurrency leases for one account, atomically.
-- KEYS[1] window zset (score = request time ms), KEYS[2] lease zset (score = lease expiry ms)
-- ARGV[1] rpm limit (0 = none), ARGV[2] concurrency limit (0 = none), ARGV[3] member (request id), ARGV[4] lease ms
-- Returns {allowed, reason, rpm_used, conc_used, reset_ms}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm = tonumber(ARGV[1])
local conc = tonumber(ARGV[2])
local lease = tonumber(ARGV[4])
local rpm_used, conc_used, reset = 0, 0, 0
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
  rpm_used = redis.call('ZCARD', KEYS[1])
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if oldest[2] then reset = 60000 - (now - tonumber(oldest[2])) end
  if rpm_used >= rpm then return {0, 'rpm', rpm_used, 0, reset} end
end
if conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  conc_used = redis.call('ZCARD', KEYS[2])
  if conc_used >= conc then return {0, 'concurrency', rpm_used, conc_used, 1000} end
end
if rpm > 0 then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], 61000)
  rpm_used = rpm_used + 1
  if reset == 0 then reset = 60000 end
end
if conc > 0 then
  redis.call('ZADD', KEYS[2], now + lease, ARGV[3])
  redis.call('PEXPIRE', KEYS[2], lease + 1000)
  conc_used = conc_used + 1
end
return {1, '', rpm_used, conc_used, reset}
