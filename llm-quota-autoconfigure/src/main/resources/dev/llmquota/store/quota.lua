-- llm-quota's books in Redis: every operation on one provider entry's buckets, slots and
-- holds, atomically. All keys of a call share the entry's hash tag, so they live in one
-- Redis Cluster slot. Loaded once and run with EVALSHA.
--
-- ARGV[1] is the operation, ARGV[2] the time in microseconds, or '' for Redis's own clock
-- (TIME). Only tests pass a time. Every number goes to Redis through fmt(): Lua's
-- tostring would write large integers in exponent form and lose digits.
--
-- Rate buckets are hashes {l = level, t = time, r = remainder}, refilled continuously at
-- `rate` units per minute up to `cap`, exactly as dev.llmquota.core.RateBucket does it in
-- process, in microseconds instead of nanoseconds: integer arithmetic with the fractional
-- remainder carried (in units of 1 / MINUTE), so nothing is lost or invented. The level may
-- go below zero (debt); the time may lie ahead of now when a call was booked ahead. A
-- missing key is a full bucket: each write sets a TTL of the time until the bucket is full
-- again, so idle keys disappear. Unless the books were lost (see Lost books below). While
-- calls are booked ahead, h holds the highest level before a take since now last passed
-- the bucket's time (the peak), with its fraction and since when it counts: units given
-- back then raise the level at the time of the last booking by no more than the capacity
-- above it (a booking that waited for a fuller bucket already counted them), as
-- dev.llmquota.core.kernel.RateBucket does. A cancelled call's units name the time they
-- were taken: the last take's (k is its time) come back whole, and those the peak does
-- not cover, none.
--
-- Daily counters are hashes {d = day, u = used}. The caller names today's day number in
-- its zone (Lua has no time zones), or the number of the first day of this month for a
-- monthly budget; a number lower than the stored one (a wall clock that jumped back)
-- never resets the counter.
--
-- Slots are sorted sets of leases (member = lease id, score = expiry): in-flight calls
-- counted across replicas. A replica that dies stops renewing; its leases expire.
--
-- Limits changed at run time are one hash per provider entry, with a version `v`.
--
-- Holds are hashes: `p:<dimension>` = end of a rate-limit penalty; `xd`, `xr`, `xu`, `xs`,
-- `xp`, `xi` = an exhausted quota's dimension, reason, reset (ms on the script's clock, ''
-- if unknown),
-- start, next probe time and probe interval.

local MINUTE = 60000000

-- Writes after TIME need effects replication, the default since Redis 5; older servers
-- are asked for it.
if redis.replicate_commands then
  pcall(redis.replicate_commands)
end

local op = ARGV[2] == '' and nil or tonumber(ARGV[2])
local now
if op then
  now = op
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
op = ARGV[1]

local function fmt(n)
  return string.format('%.0f', n)
end

-- floor(a / b) and ceil(a / b) for non-negative integers held in doubles, corrected
-- for the rounding of the division.
local function div_floor(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function div_ceil(a, b)
  local q = div_floor(a, b)
  if q * b < a then
    q = q + 1
  end
  return q
end

-- Lost books ---------------------------------------------------------------------------

-- book, adjust, lower, wait and state name the provider entry's epoch key last in KEYS, and last in
-- ARGV whether the replica uses these books for the first time ('1') or used them before
-- ('0'). The key holds '0' when the books began with the replicas that use them: a
-- bucket missing then is new, or expired idle, and so full. A replica that used the books
-- before and finds the key gone knows they were lost with it (a restart without
-- persistence, a failover to an empty replica, an eviction) and sets it to the time: a
-- rate bucket missing from then on starts empty at that time and refills at its rate, so
-- the replicas, which spent the lost buckets moments before, never take a window twice.
-- (Daily counters are not rebuilt: a lost day starts unused.)
local lost_since = nil

local function epoch()
  local key = KEYS[#KEYS]
  local v = redis.call('GET', key)
  if not v then
    if ARGV[#ARGV] == '1' then
      v = '0'
    else
      v = fmt(now)
    end
    redis.call('SET', key, v)
  end
  if v ~= '0' then
    lost_since = tonumber(v)
  end
end

-- wait and state read the epoch as the writes do, and write nothing: a replica that used
-- the books and finds the key gone reads them lost now (the next write records when)
local function epoch_read()
  local v = redis.call('GET', KEYS[#KEYS])
  if not v then
    if ARGV[#ARGV] ~= '1' then
      lost_since = now
    end
  elseif v ~= '0' then
    lost_since = tonumber(v)
  end
end

-- Rate buckets -------------------------------------------------------------------------

local function load_rate(key, rate, cap)
  local v = redis.call('HMGET', key, 'l', 't', 'r', 'h', 'k')
  local b = { key = key, rate = rate, cap = cap }
  if v[1] then
    b.l = math.min(tonumber(v[1]), cap)
    b.t = tonumber(v[2])
    b.r = tonumber(v[3])
    if not b.r or b.r < 0 or b.r >= MINUTE then
      -- a remainder out of range (hand-edited, or rounded beyond 2^53) is dropped
      b.r = 0
    end
    b.stored_h = v[4]
    -- when the last take was
    b.k = tonumber(v[5])
    if b.t > now then
      -- calls booked ahead: the peak, its fraction and since when it counts, written
      -- with the bucket's time and capacity; unknown when they differ (the limits
      -- changed, or a replica of an earlier version wrote the bucket): the capacity
      local h, hr, hs, ht, hc = string.match(v[4] or '', '^(-?%d+):(%d+):(-?%d+):(-?%d+):(%d+)$')
      if h and tonumber(ht) == b.t and tonumber(hc) == cap then
        b.h, b.hr, b.hs = tonumber(h), tonumber(hr), tonumber(hs)
      else
        b.h, b.hr, b.hs = cap, 0, now
      end
    end
  elseif lost_since and lost_since <= now then
    b.l = 0
    b.t = lost_since
    b.r = 0
  else
    b.l = cap
    b.t = now
    b.r = 0
  end
  if b.t <= now then
    -- nothing is booked ahead: the peak counts from now
    b.hs = now
  end
  return b
end

local function refill(b, at)
  if at <= b.t then
    -- time that did not advance, or a booking ahead of now, adds nothing
    return
  end
  local elapsed = at - b.t
  b.t = at
  if b.l >= b.cap then
    b.r = 0
    return
  end
  local missing = b.cap - b.l
  if elapsed >= div_ceil(missing * MINUTE - b.r, b.rate) then
    b.l = b.cap
    b.r = 0
    return
  end
  local total = elapsed * b.rate + b.r
  local added = div_floor(total, MINUTE)
  b.l = b.l + added
  b.r = total - added * MINUTE
end

-- microseconds from now until the bucket can take `units` and keep `floor` after them
-- (a call larger than the capacity waits for a full bucket)
local function rate_wait(b, units, floor)
  refill(b, now)
  local need = math.min(units + (floor or 0), b.cap)
  local base = math.max(0, b.t - now)
  if b.l >= need then
    return base
  end
  return base + div_ceil((need - b.l) * MINUTE - b.r, b.rate)
end

-- the least an idle rate bucket's key is kept, in milliseconds
local RATE_IDLE_TTL = 3600 * 1000

local function until_full(b)
  local base = math.max(0, b.t - now)
  if b.l >= b.cap then
    return base
  end
  return base + div_ceil((b.cap - b.l) * MINUTE - b.r, b.rate)
end

local function take(b, units, at)
  refill(b, at)
  b.k = at
  if not b.h or b.l > b.h or (b.l == b.h and b.r > b.hr) then
    b.h = b.l
    b.hr = b.r
  end
  b.l = b.l - units
end

-- taken: when a cancelled call's units were taken ('' for a refund from usage): the last
-- booking's come back whole, those taken before the peak began to count (a take since
-- may have found the bucket full) come back to no one, others up to the capacity above
-- the peak
local function give(b, units, taken)
  refill(b, now)
  local stamp = tonumber(taken)
  local last = stamp and stamp == b.k
  if stamp and not last and stamp < b.hs then
    units = 0
  elseif (stamp or b.t > now) and not last then
    -- the room above the peak, whole units and a fraction
    local room, fraction, carried = b.h and (b.cap - b.h) or 0, 0, 0
    if room > 0 and b.hr and b.hr > 0 then
      room = room - 1
      fraction = MINUTE - b.hr
    end
    if units > room then
      units = math.max(0, room)
      carried = fraction
    end
    if b.h then
      b.h = b.h + units
      b.hr = b.hr + carried
      if b.hr >= MINUTE then
        b.h = b.h + 1
        b.hr = b.hr - MINUTE
      end
    end
    b.r = b.r + carried
    if b.r >= MINUTE then
      units = units + 1
      b.r = b.r - MINUTE
    end
  end
  b.l = b.l + units
  if b.l >= b.cap then
    b.l = b.cap
    b.r = 0
  end
end

local function save_rate(b)
  if b.h and b.t > now then
    redis.call('HSET', b.key, 'l', fmt(b.l), 't', fmt(b.t), 'r', fmt(b.r), 'k', fmt(b.k or -1), 'h',
      fmt(b.h) .. ':' .. fmt(b.hr) .. ':' .. fmt(b.hs) .. ':' .. fmt(b.t) .. ':' .. fmt(b.cap))
  else
    redis.call('HSET', b.key, 'l', fmt(b.l), 't', fmt(b.t), 'r', fmt(b.r), 'k', fmt(b.k or -1))
    if b.stored_h then
      redis.call('HDEL', b.key, 'h')
    end
  end
  -- a missing key reads as a full bucket; limits change without a write here (learned
  -- from headers, set by an operator), so a key outlives an hour of idleness, not just
  -- its refill under the limits of now
  redis.call('PEXPIRE', b.key, fmt(math.max(div_ceil(until_full(b), 1000) + 1000, RATE_IDLE_TTL)))
end

-- Daily counters -----------------------------------------------------------------------

-- long enough for a monthly budget
local DAY_TTL = 40 * 86400 * 1000

local function load_day(key, today)
  local v = redis.call('HMGET', key, 'd', 'u')
  local c = { key = key, d = today, u = 0 }
  if v[1] then
    c.d = tonumber(v[1])
    c.u = tonumber(v[2])
    if today > c.d then
      c.d = today
      c.u = 0
    end
  end
  return c
end

-- nothing always fits (a model without a price spends nothing of a budget in debt)
local function day_fits(c, units, limit)
  if units <= 0 then
    return true
  end
  if units > limit then
    return c.u == 0
  end
  return c.u + units <= limit
end

local function save_day(c)
  redis.call('HSET', c.key, 'd', fmt(c.d), 'u', fmt(c.u))
  redis.call('PEXPIRE', c.key, DAY_TTL)
end

-- A bucket argument is four values: kind ('r' or 'd'), units, and for a rate bucket its
-- rate and capacity, for a daily counter its limit and today's day number.
local function bucket_args(base, i)
  local at = base + (i - 1) * 4
  return ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
end

local function load(key, kind, a, b)
  if kind == 'r' then
    return load_rate(key, a, b)
  end
  return load_day(key, b)
end

local function save(kind, s)
  if kind == 'r' then
    save_rate(s)
  else
    save_day(s)
  end
end

local function adjust(kind, s, units, day, taken)
  if kind == 'd' then
    if units < 0 and s.d ~= day then
      -- a refund of another day than the counter's (a replica's clock behind): that
      -- day charged it, not this one
      return
    end
    s.u = math.max(0, s.u + units)
  elseif units >= 0 then
    take(s, units, now)
  else
    give(s, -units, taken)
  end
end

-- Holds --------------------------------------------------------------------------------

local HOLD_TTL = 7 * 86400 * 1000

-- returns the latest penalty end and its dimension, and the exhaustion fields, clearing
-- an exhaustion whose reset has passed
local function read_hold(key)
  local v = redis.call('HGETALL', key)
  local h = { penalty = 0, dimension = '' }
  for i = 1, #v, 2 do
    local field, value = v[i], v[i + 1]
    if string.sub(field, 1, 2) == 'p:' then
      local ends = tonumber(value)
      if ends > now and ends > h.penalty then
        h.penalty = ends
        h.dimension = string.sub(field, 3)
      end
    else
      h[field] = value
    end
  end
  if h.xr and h.xu ~= '' and now >= tonumber(h.xu) * 1000 then
    redis.call('HDEL', key, 'xd', 'xr', 'xu', 'xs', 'xp', 'xi')
    h.xr = nil
  end
  return h
end

-- how long until an exhaustion's reset, in ms from now ('' if unknown): replicas take it
-- as a wait on their own clocks, never as a time on Redis's
local function reset_left(xu)
  if xu == nil or xu == '' then
    return ''
  end
  return fmt(math.max(0, tonumber(xu) - math.floor(now / 1000)))
end

-- a hold outlives any penalty; an exhaustion nobody clears is forgotten after a week,
-- or when its reset has passed if that is later (a monthly quota)
local function touch_hold(key)
  local ttl = HOLD_TTL
  local reset = redis.call('HGET', key, 'xu')
  if reset and reset ~= '' then
    -- the reset in epoch milliseconds, now in microseconds
    ttl = math.max(ttl, tonumber(reset) - math.floor(now / 1000) + 60000)
  end
  redis.call('PEXPIRE', key, fmt(ttl))
end

-- Operations ---------------------------------------------------------------------------

-- book: ARGV[3] latest start in microseconds from now (-1: any), ARGV[4] buckets,
-- ARGV[5] slots, ARGV[6] holds, ARGV[7] lease id, ARGV[8] lease time, ARGV[9] the call's
-- class for the interactive reserve ('i', 'b', or '' for none), ARGV[10] the reserve's
-- share of each rate bucket, ARGV[11] how long after an interactive wait the reserve is
-- lent to batch calls, then per bucket four values, then per slot its limit. KEYS:
-- buckets, slots, holds, and the key of the last interactive wait, in that order.
-- A batch call leaves share x capacity in each rate bucket while an interactive call
-- waited within the lending time; an interactive call that cannot start at once records
-- that it waited.
-- Replies {1, now, index, wait, day} refused by the key at index
-- (day: a daily counter's stored day, else -1); {2, now, index, penalty end, dimension}
-- held by a penalty; {3, now, index, dimension, reason, ms until reset, since} exhausted. A
-- booking replies {0, now, start, probe (1 or 0), then per bucket two values: a rate
-- bucket's level and the microseconds from now of its time, or a daily counter's units
-- used and -1}.
local function book()
  epoch()
  local latest = tonumber(ARGV[3])
  local nb, ns, nh = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local lease, lease_time = ARGV[7], tonumber(ARGV[8])
  local class, share, lend_after = ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11])
  local reserve_key = KEYS[nb + ns + nh + 1]
  local keep = false
  if class == 'b' and share > 0 then
    local last = redis.call('GET', reserve_key)
    keep = last ~= false and now - tonumber(last) < lend_after
  end
  local function waited()
    if class == 'i' then
      redis.call('SET', reserve_key, fmt(now), 'PX', fmt(div_ceil(lend_after, 1000) + 1000))
    end
  end
  local slot_base = 12 + nb * 4
  local probe, probe_interval = 0, 0
  local start = now
  for i = 1, nh do
    local key = KEYS[nb + ns + i]
    local h = read_hold(key)
    if h.xr then
      if h.xu == '' and now >= tonumber(h.xp) and probe == 0 then
        -- one call through now and then, to see whether the quota is back; the probe
        -- is taken only if this call is booked
        probe = key
        probe_interval = tonumber(h.xi)
      elseif probe == 0 or h.xu ~= '' then
        return { 3, now, nb + ns + i, h.xd, h.xr, reset_left(h.xu), h.xs }
      end
    end
    if h.penalty > start then
      start = h.penalty
      if latest >= 0 and start - now > latest then
        return { 2, now, nb + ns + i, h.penalty, h.dimension }
      end
    end
  end
  local states, waits = {}, {}
  local binding, longest = 0, -1
  for i = 1, nb do
    local kind, units, a, b = bucket_args(12, i)
    local s = load(KEYS[i], kind, a, b)
    states[i] = s
    local wait
    if kind == 'd' then
      if not day_fits(s, units, a) then
        -- a daily counter is not booked ahead into the next day
        waited()
        return { 1, now, i, -1, s.d }
      end
      wait = 0
    else
      wait = rate_wait(s, units, keep and math.ceil(share * b - 1e-9) or 0)
    end
    waits[i] = wait
    if wait > longest then
      longest = wait
      binding = i
    end
  end
  if longest > 0 then
    waited()
  end
  if longest > 0 and latest >= 0 and longest > latest then
    return { 1, now, binding, longest, -1 }
  end
  if now + longest > start then
    start = now + longest
  end
  local expiry = now + lease_time
  -- Waiting for a shared slot is first come, first served across replicas: a call
  -- refused for a slot takes a place in the slot's line (its score: the line's next
  -- number, batch calls after every interactive one), keeps it while it asks again, and
  -- gets a slot only when more are free than calls ahead of it in line. A place not
  -- asked for within `stale` is given up (the call went away).
  local place, stale = ARGV[slot_base + ns], tonumber(ARGV[slot_base + ns + 1])
  local line_base = #KEYS - 1 - 3 * ns
  local batch_offset = 1000000000000000
  for i = 1, ns do
    local key = KEYS[nb + i]
    local line, seen, seq = KEYS[line_base + 3 * i - 2], KEYS[line_base + 3 * i - 1], KEYS[line_base + 3 * i]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now))
    local ahead = 0
    local score = nil
    if place ~= '' then
      local gone = redis.call('ZRANGEBYSCORE', seen, '-inf', fmt(now - stale))
      for _, p in ipairs(gone) do
        redis.call('ZREM', line, p)
        redis.call('ZREM', seen, p)
      end
      ahead = redis.call('ZRANK', line, place)
      if not ahead then
        -- a newcomer: behind every call in line of its class or a higher one
        local n = tonumber(redis.call('GET', seq) or '0') + 1
        score = (class == 'b') and (batch_offset + n) or n
        ahead = redis.call('ZCOUNT', line, '-inf', '(' .. fmt(score))
      end
    end
    local free = tonumber(ARGV[slot_base + i - 1]) - redis.call('ZCARD', key)
    if free <= ahead then
      waited()
      local wait = lease_time
      if free <= 0 then
        local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
        wait = tonumber(first[2]) - now
      end
      if place ~= '' then
        if score then
          redis.call('ZADD', line, fmt(score), place)
          redis.call('INCR', seq)
        end
        redis.call('ZADD', seen, fmt(now), place)
        for _, k in ipairs({ line, seen, seq }) do
          redis.call('PEXPIRE', k, fmt(div_ceil(stale, 1000) * 2))
        end
      end
      return { 1, now, nb + i, wait, -1 }
    end
  end
  for i = 1, ns do
    local key = KEYS[nb + i]
    redis.call('ZADD', key, fmt(expiry), lease)
    redis.call('PEXPIRE', key, fmt(div_ceil(lease_time, 1000) + 1000))
    if place ~= '' then
      redis.call('ZREM', KEYS[line_base + 3 * i - 2], place)
      redis.call('ZREM', KEYS[line_base + 3 * i - 1], place)
    end
  end
  for i = 1, nb do
    local kind, units = bucket_args(12, i)
    local s = states[i]
    if kind == 'd' then
      s.u = s.u + units
    else
      -- each bucket is charged when it allows the call, not at the call's start: a
      -- bucket with room now is not held back by a slower one
      take(s, units, now + waits[i])
    end
    save(kind, s)
  end
  local reply = { 0, now, start, 0 }
  if probe ~= 0 then
    redis.call('HSET', probe, 'xp', fmt(now + probe_interval))
    reply[4] = 1
  end
  -- what each bucket holds after the booking, for a replica's fallback books to start
  -- from: a rate bucket's level and the time it is at (from now), a daily counter's units
  -- used and the day it counts (a replica whose clock is behind another's books on the
  -- day the other opened: its refunds go there)
  for i = 1, nb do
    local kind = bucket_args(12, i)
    local s = states[i]
    if kind == 'd' then
      table.insert(reply, s.u)
      table.insert(reply, s.d)
    else
      table.insert(reply, s.l)
      table.insert(reply, math.max(0, s.t - now))
    end
  end
  return reply
end

-- wait: ARGV[3] buckets, then per bucket four values, then, for a call of a class, its
-- class, the reserve's share and lending time (the KEY after the buckets: the last
-- interactive wait). Replies {0, now, wait} or {1, now, index, -1, day} for a spent daily
-- counter. Takes nothing.
local function wait()
  epoch_read()
  local n = tonumber(ARGV[3])
  -- a batch call keeps the interactive reserve back as its booking would
  local class, share, lend_after = ARGV[4 + 4 * n], tonumber(ARGV[5 + 4 * n] or '0'), tonumber(ARGV[6 + 4 * n] or '0')
  local keep = false
  if class == 'b' and share > 0 then
    local last = redis.call('GET', KEYS[n + 1])
    keep = last ~= false and now - tonumber(last) < lend_after
  end
  local longest = 0
  for i = 1, n do
    local kind, units, a, b = bucket_args(4, i)
    local s = load(KEYS[i], kind, a, b)
    if kind == 'd' then
      if not day_fits(s, units, a) then
        return { 1, now, i, -1, s.d }
      end
    else
      longest = math.max(longest, rate_wait(s, units, keep and math.ceil(share * b - 1e-9) or 0))
    end
  end
  return { 0, now, longest }
end

-- adjust: ARGV[3] buckets, then per bucket four values whose units are the correction:
-- positive charges (into debt if need be), negative refunds (never beyond capacity); then
-- per bucket when a refund's units were taken, or ''.
local function adjust_all()
  epoch()
  local n = tonumber(ARGV[3])
  for i = 1, n do
    local kind, units, a, b = bucket_args(4, i)
    local s = load(KEYS[i], kind, a, b)
    adjust(kind, s, units, b, ARGV[3 + 4 * n + i])
    save(kind, s)
  end
  return { 0, now }
end

-- lower: ARGV[3] rate, ARGV[4] capacity, ARGV[5] highest level allowed; never raises.
local function lower()
  epoch()
  local b = load_rate(KEYS[1], tonumber(ARGV[3]), tonumber(ARGV[4]))
  local max = tonumber(ARGV[5])
  refill(b, now)
  if max < b.l or (max == b.l and b.r > 0) then
    b.l = max
    b.r = 0
  end
  save_rate(b)
  return { 0, now }
end

-- state: ARGV[3] buckets, then per bucket four values (units ignored). Replies, per
-- bucket, the level and microseconds until full, or the units used and the stored day.
local function state()
  epoch_read()
  local reply = { 0, now }
  for i = 1, tonumber(ARGV[3]) do
    local kind, _, a, b = bucket_args(4, i)
    local s = load(KEYS[i], kind, a, b)
    if kind == 'd' then
      table.insert(reply, s.u)
      table.insert(reply, s.d)
    else
      refill(s, now)
      table.insert(reply, s.l)
      table.insert(reply, until_full(s))
    end
  end
  return reply
end

-- release: ARGV[3] lease id; KEYS: the slots it holds.
local function release()
  for i = 1, #KEYS do
    redis.call('ZREM', KEYS[i], ARGV[3])
  end
  return { 0, now }
end

-- renew: ARGV[3] lease time, then one lease id per key; an expired lease is not revived.
local function renew()
  local expiry = fmt(now + tonumber(ARGV[3]))
  local renewed = 0
  for i = 1, #KEYS do
    -- an expired lease may already be counted free by others: it stays gone
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', fmt(now))
    renewed = renewed + redis.call('ZADD', KEYS[i], 'XX', 'CH', expiry, ARGV[3 + i])
    redis.call('PEXPIRE', KEYS[i], fmt(div_ceil(tonumber(ARGV[3]), 1000) + 1000))
  end
  return { 0, now, renewed }
end

-- restore: like renew, but adds leases that expired while Redis was unreachable: their
-- calls still run.
local function restore()
  local expiry = fmt(now + tonumber(ARGV[3]))
  for i = 1, #KEYS do
    redis.call('ZADD', KEYS[i], 'NX', expiry, ARGV[3 + i])
    redis.call('PEXPIRE', KEYS[i], fmt(div_ceil(tonumber(ARGV[3]), 1000) + 1000))
  end
  return { 0, now }
end

-- penalize: ARGV[3] dimension, ARGV[4] wait in microseconds; keeps the later end.
local function penalize()
  local field = 'p:' .. ARGV[3]
  local ends = now + tonumber(ARGV[4])
  local old = redis.call('HGET', KEYS[1], field)
  if not old or tonumber(old) < ends then
    redis.call('HSET', KEYS[1], field, fmt(ends))
  end
  touch_hold(KEYS[1])
  return { 0, now }
end

-- exhaust: ARGV[3] dimension ('' if none), ARGV[4] reason, ARGV[5] the wait until its reset
-- in ms ('' if unknown), ARGV[6] probe interval in microseconds. The reset is kept on this
-- script's clock: a replica's wall clock, stepped or skewed, moves it nowhere.
local function exhaust()
  local reset = ''
  if ARGV[5] ~= '' then
    reset = fmt(math.floor(now / 1000) + tonumber(ARGV[5]))
  end
  redis.call('HSET', KEYS[1], 'xd', ARGV[3], 'xr', ARGV[4], 'xu', reset, 'xs', fmt(now), 'xp',
    fmt(now + tonumber(ARGV[6])), 'xi', ARGV[6])
  touch_hold(KEYS[1])
  return { 0, now }
end

-- held: replies {0, now, the penalty in force's end in microseconds ('0' if none), its
-- dimension, '1' if a spent quota is in force else '0', its reason, the ms until its reset
-- ('' if unknown)}.
local function held()
  local h = read_hold(KEYS[1])
  if h.xr then
    return { 0, now, fmt(h.penalty), h.dimension, '1', h.xr, reset_left(h.xu) }
  end
  return { 0, now, fmt(h.penalty), h.dimension, '0', '', '' }
end

-- clear: ends an exhaustion (a probe succeeded, or an operator reset it).
local function clear()
  local had = redis.call('HDEL', KEYS[1], 'xd', 'xr', 'xu', 'xs', 'xp', 'xi')
  return { 0, now, had }
end

-- limit: ARGV[3] field ('<dimension>|<model>', or '<dimension>|' for the account), ARGV[4]
-- the limit an operator set at run time; bumps the version `v` that replicas watch.
local function limit()
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
  redis.call('HINCRBY', KEYS[1], 'v', 1)
  -- configuration, not state: kept until deleted, so replicas started later agree
  redis.call('PERSIST', KEYS[1])
  return { 0, now }
end

-- limits: replies {0, now, field, value, ...}, the version `v` among them.
local function limits()
  local reply = { 0, now }
  local v = redis.call('HGETALL', KEYS[1])
  for i = 1, #v do
    table.insert(reply, v[i])
  end
  return reply
end

-- alive: a replica says it is live for one provider entry. ARGV[3] its id, ARGV[4] how
-- long it counts as live, in microseconds; KEYS[1] the entry's replicas by expiry, always
-- on Redis's clock. Replies {0, now, live replicas}.
local function alive()
  redis.call('ZADD', KEYS[1], fmt(now + tonumber(ARGV[4])), ARGV[3])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
  redis.call('PEXPIRE', KEYS[1], fmt(div_ceil(tonumber(ARGV[4]), 1000) + 1000))
  return { 0, now, redis.call('ZCARD', KEYS[1]) }
end

local ops = {
  book = book, wait = wait, adjust = adjust_all, lower = lower, state = state,
  release = release, renew = renew, penalize = penalize, exhaust = exhaust, clear = clear, held = held,
  limit = limit, limits = limits, restore = restore, alive = alive
}
return ops[op]()
