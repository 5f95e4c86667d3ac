-- Prepended to every policy script by the script registry.
-- KEYS[1]  the bucket key
-- ARGV[1]  cost in units; 0 = peek (decide for one unit, write nothing)
-- ARGV[2]  "now" in microseconds for test vectors only; empty = Redis TIME (production)
-- ARGV[3..] the rule's parameters, in the order the model's luaArgs() gives
-- returns  { allowed 0|1, remaining, resetAfterMs, retryAfterMs, delayMs, state }
--          all integers (already rounded as the model rounds) except state, a string
--          given on peeks only (cost 0: the admin API's inspect, the twin tests), '' otherwise,
--          so a decision's reply stays small; trailing 0 and '' elements may be
--          left off (the store reads a missing one as 0 or '')
-- Helpers below are values or functions; a function costs a closure on every
-- call of the script, so the hottest ones are inlined in the twins instead:
-- string.format('%.0f', x) (or '%d:%d' for a pair) for integers, HGET KEYS[1] ARGV[#ARGV] for the state,
-- math.max(0, math.ceil(us / 1000)) for whole ms rounded up (the model's ceilMs),
-- (ARGV[1] == '0' and state or '') for the state given on peeks only.
-- "now" in µs: ARGV[2] in test vectors only, Redis TIME otherwise.
local sluice_now = tonumber(ARGV[2])
if sluice_now == nil then
  local t = redis.call('TIME')
  sluice_now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function sluice_floor_units(units)
  local u = math.floor(units + 1e-9)
  if u < 0 then return 0 end
  return u
end
-- Storage: a policy whose state is one string keeps it in field ARGV[#ARGV]
-- (the route) of the tenant's hash KEYS[1] = "rl:{tenant}". One hash per tenant
-- costs far less memory than one key per bucket. The hash lives as long as its
-- longest-lived bucket; a field past its own TTL decides exactly like no field
-- (the models guarantee it), so stale fields change nothing.
local function sluice_save(value, ttl_ms)
  if redis.call('HSET', KEYS[1], ARGV[#ARGV], value) == 0 then
    -- an existing field: the hash has a TTL, which only ever grows (GT, Redis 7)
    redis.call('PEXPIRE', KEYS[1], ttl_ms, 'GT')
  elseif redis.call('PTTL', KEYS[1]) < ttl_ms then
    redis.call('PEXPIRE', KEYS[1], ttl_ms)
  end
end
-- GCRA and the leaky bucket keep a TAT as "<anchor µs>:<units>": the flow is
-- back in step at anchor + units * interval (see src/policies/tat.ts).
-- Returns anchor, units and ahead (TAT - now, µs), an idle flow restarting at now.
local function sluice_load_tat(now, interval)
  local anchor, units = now, 0
  local raw = redis.call('HGET', KEYS[1], ARGV[#ARGV])
  if raw then
    local a, u = string.match(raw, '^(%d+):(%d+)$')
    anchor, units = tonumber(a), tonumber(u)
  end
  local ahead = anchor - now + units * interval
  if not (ahead > 1e-6) then return now, 0, 0 end
  return anchor, units, ahead
end
-- The state on a peek, '' on a decision (see the header).
local function sluice_peeked_fn(make)
  if ARGV[1] == '0' then return make() end
  return ''
end
