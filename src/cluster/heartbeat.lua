-- Membership heartbeat: one round trip a second per instance.
-- KEYS[1] ZSET of live instances scored by last-seen ms (Redis TIME, so gateway clocks never matter)
-- KEYS[2] this region's request counter, KEYS[3] the published region shares (JSON)
-- ARGV[1] instance id, ARGV[2] ttl ms (older members are dropped), ARGV[3] requests since the last beat
-- returns { live instance count, published shares or '' }
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - ttl))
redis.call('PEXPIRE', KEYS[1], ttl * 2)
local requests = tonumber(ARGV[3])
if requests > 0 then redis.call('INCRBY', KEYS[2], requests) end
return { redis.call('ZCARD', KEYS[1]), redis.call('GET', KEYS[3]) or '' }
