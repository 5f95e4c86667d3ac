-- Concurrency limit twin of model.ts: a sorted set of lease ids scored by their
-- expiry in µs, at most ARGV[3] members.
-- KEYS[1] the slot key; ARGV[1] 'acquire' (also renews) or 'release';
-- ARGV[2] "now" in µs for test vectors only, '' = Redis TIME;
-- ARGV[3] max; ARGV[4] lease id; ARGV[5] lease TTL in ms.
-- returns { held 0|1, leases open, ttlMs of the key (0: deleted) }
local key = KEYS[1]
local now = tonumber(ARGV[2])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local id = ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now))
local held = 0
if ARGV[1] == 'release' then
  redis.call('ZREM', key, id)
elseif redis.call('ZSCORE', key, id) or redis.call('ZCARD', key) < tonumber(ARGV[3]) then
  redis.call('ZADD', key, string.format('%.0f', now + tonumber(ARGV[5]) * 1000), id)
  held = 1
end
local count = redis.call('ZCARD', key)
if count == 0 then
  redis.call('DEL', key)
  return { held, 0, 0 }
end
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
local ttl = math.max(1, math.ceil((tonumber(last[2]) - now) / 1000))
-- a second of slack: expired members are dropped by the next call anyway, and the
-- key must not vanish early when a caller's clock (the test vectors') runs ahead
redis.call('PEXPIRE', key, ttl + 1000)
return { held, count, ttl }
