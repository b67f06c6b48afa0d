-- The calls in flight on an agent key billed to a reserved escrow, and the escrow's closing
-- (capabilities/agents/escrow-flights.ts). Both keys are in the escrow wallet's shard (one hash slot).
-- KEYS[1] in-flight zset (member: request id, score: deadline in ms), KEYS[2] the escrow's end marker
-- ARGV[1] 'enter' | 'leave' | 'close', ARGV[2] member, ARGV[3] a flight's lease ms, ARGV[4] end marker ttl s
-- enter: -1 when the escrow is closed (the call is refused), else registers the call and returns 1.
-- leave, close (close sets the end marker first): -1 when the escrow is not closed; else the number of
-- calls still in flight, those past their deadline dropped (0: the escrow's rest may be released).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local op = ARGV[1]
if op == 'enter' then
  if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
  local lease = tonumber(ARGV[3])
  redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], lease + 60000)
  return 1
end
if op == 'leave' then
  redis.call('ZREM', KEYS[1], ARGV[2])
elseif op == 'close' then
  redis.call('SET', KEYS[2], '1', 'EX', tonumber(ARGV[4]))
end
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
