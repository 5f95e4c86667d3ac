-- Adjust twin of tat.ts adjustTat() for GCRA and the leaky bucket: takes
-- ARGV[1] units whatever the limit (negative: give back, down to an idle flow).
-- The emission interval comes from the rate at ARGV[4] (GCRA) or ARGV[3] (leaky bucket).
-- Returns the state written.
local delta = tonumber(ARGV[1])
local rate = tonumber(ARGV[4])
if #ARGV == 6 then rate = tonumber(ARGV[3]) end
local now = sluice_now
local interval = 1000000 / rate
local anchor, units = sluice_load_tat(now, interval)
units = units + delta
if units < 0 then units = 0 end
local ahead = anchor - now + units * interval
if not (ahead > 1e-6) then
  anchor, units, ahead = now, 0, 0
end
local state = string.format('%.0f', anchor) .. ':' .. string.format('%.0f', units)
sluice_save(state, math.max(1, math.ceil(ahead / 1000)))
return state
