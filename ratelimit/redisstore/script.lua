-- One sliding-window decision for the bucket KEYS[1] (see store.go for the
-- record's layout and the guarantee). Times are microseconds.
-- ARGV: capacity, window, ring slot (0: no ring), group size, now ("" to
-- use the server's TIME).
local key = KEYS[1]
local cap = tonumber(ARGV[1])
local W = tonumber(ARGV[2])
local S = tonumber(ARGV[3])
local gsize = tonumber(ARGV[4])
local now
if ARGV[5] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
else
  now = tonumber(ARGV[5])
end

-- The record: latest time, number of groups, ring total, the groups
-- (time, count), then the ring's slots (number, count), oldest first. The
-- ring is left packed: a decision reads only the slots it drops.
local last, total, ring = 0, 0, ''
local gt, gc = {}, {}
local raw = redis.call('GET', key)
if raw then
  local ng, pos
  last, ng, total, pos = struct.unpack('<dBd', raw)
  for i = 1, ng do gt[i], gc[i], pos = struct.unpack('<dI4', raw, pos) end
  ring = string.sub(raw, pos)
end
local t = math.max(now, last)

-- Groups: keep those whose latest admission is still inside (t-W, t].
local kt, kc, grouped = {}, {}, 0
for i = 1, #gt do
  if gt[i] + W > t then
    kt[#kt + 1], kc[#kc + 1] = gt[i], gc[i]
    grouped = grouped + gc[i]
  end
end
gt, gc = kt, kc
local counted = grouped

-- Ring: drop the slots that can no longer hold an admission inside the
-- window; the total is then the ring's count.
local cur = 0
if S > 0 then
  cur = math.floor(t / S)
  local off = 1
  while off < #ring do
    local s, c = struct.unpack('<I4I4', ring, off)
    if (s + 1) * S + W > t then break end
    total = total - c
    off = off + 8
  end
  if off > 1 then ring = string.sub(ring, off) end
  if total < counted then counted = total end
end

if counted < cap then
  local n = #gt
  if grouped >= 2 * cap then
    gt, gc = {t}, {counted + 1}
  elseif n > 0 and (gt[n] == t or gc[n] < gsize or n == 8) then
    gt[n], gc[n] = t, gc[n] + 1
  else
    gt[n + 1], gc[n + 1] = t, 1
  end
  if S > 0 then
    total = total + 1
    local m = #ring - 7
    if m >= 1 and struct.unpack('<I4', ring, m) == cur then
      local _, c = struct.unpack('<I4I4', ring, m)
      ring = string.sub(ring, 1, m - 1) .. struct.pack('<I4I4', cur, c + 1)
    else
      ring = ring .. struct.pack('<I4I4', cur, 1)
    end
  end
  local out = {struct.pack('<dBd', t, #gt, total)}
  for i = 1, #gt do out[#out + 1] = struct.pack('<dI4', gt[i], gc[i]) end
  out[#out + 1] = ring
  redis.call('SET', key, table.concat(out), 'PX', math.floor((W + S) / 1000) + 1)
  return {1, cap - counted - 1, 0, t}
end

-- Rejected (nothing is written): the earliest time either count drops
-- below capacity.
local need = grouped - cap + 1
local free = gt[#gt] + W
for i = 1, #gt do
  need = need - gc[i]
  if need <= 0 then
    free = gt[i] + W
    break
  end
end
if S > 0 then
  need = total - cap + 1
  for off = 1, #ring - 7, 8 do
    local s, c = struct.unpack('<I4I4', ring, off)
    need = need - c
    if need <= 0 then
      free = math.min(free, (s + 1) * S + W)
      break
    end
  end
end
return {0, 0, free - now, t}
