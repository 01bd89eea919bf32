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

local last = 0
local gt, gc, rs, rn = {}, {}, {}, {}
local raw = redis.call('GET', key)
if raw then
  local ng, nr, pos
  last, ng, nr, pos = struct.unpack('<dBB', raw)
  for i = 1, ng do gt[i], gc[i], pos = struct.unpack('<dI4', raw, pos) end
  for i = 1, nr do rs[i], rn[i], pos = struct.unpack('<I4I4', raw, pos) end
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

-- Ring: keep slots that may hold an admission inside the window.
local cur, rc = 0, 0
if S > 0 then
  cur = math.floor(t / S)
  local ks, kn = {}, {}
  for i = 1, #rs do
    if (rs[i] + 1) * S + W > t then
      ks[#ks + 1], kn[#kn + 1] = rs[i], rn[i]
      rc = rc + rn[i]
    end
  end
  rs, rn = ks, kn
  if rc < counted then counted = rc end
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
    local m = #rs
    if m > 0 and rs[m] == cur then
      rn[m] = rn[m] + 1
    else
      rs[m + 1], rn[m + 1] = cur, 1
    end
  end
  local out = {struct.pack('<dBB', t, #gt, #rs)}
  for i = 1, #gt do out[#out + 1] = struct.pack('<dI4', gt[i], gc[i]) end
  for i = 1, #rs do out[#out + 1] = struct.pack('<I4I4', rs[i], rn[i]) end
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
  need = rc - cap + 1
  for i = 1, #rs do
    need = need - rn[i]
    if need <= 0 then
      free = math.min(free, (rs[i] + 1) * S + W)
      break
    end
  end
end
return {0, 0, free - now, t}
