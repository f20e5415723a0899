/**
 * The Lua scripts of the Redis counters: each call is one script, so every instance sees one order of
 * admissions and no two can both take the last unit. The rules are counter-store.ts's, written a second time
 * (memory-counters.ts is the first); one suite checks both. Keys of a scope share the hash tag `{scope}`.
 * Lua numbers returned to Redis become integers, so every figure returned is rounded up first.
 */

/** Shared by the scripts: release an expired or settled reservation, and sweep what expired. */
const COMMON = `
local W = 60000
local function num(s) if s == nil or s == '' then return nil end return tonumber(s) end
local function release(base, l)
  local amount = redis.call('HGET', base .. ':resamt', l)
  if amount then
    local c, m = string.match(amount, '^([^|]*)|(.*)$')
    local reserved = base .. ':reserved'
    local rc = tonumber(redis.call('HGET', reserved, 'cost') or '0') - tonumber(c)
    local rm = tonumber(redis.call('HGET', reserved, 'media') or '0') - tonumber(m)
    if rc < 1e-12 then rc = 0 end
    if rm < 1e-9 then rm = 0 end
    redis.call('HSET', reserved, 'cost', rc, 'media', rm)
    redis.call('HDEL', base .. ':resamt', l)
  end
  redis.call('ZREM', base .. ':res', l)
end
-- Only what the scope's limits read: a requests-only key never touches its leases or reservations.
local function sweep(base, now, rpm, par, reserves)
  if reserves then
    local expired = redis.call('ZRANGEBYSCORE', base .. ':res', '-inf', now)
    for _, l in ipairs(expired) do release(base, l) end
  end
  if par then redis.call('ZREMRANGEBYSCORE', base .. ':par', '-inf', now) end
  if rpm then redis.call('ZREMRANGEBYSCORE', base .. ':req', '-inf', now - W) end
end
-- A scope's keys live at least ms from now and are never shortened: a call admitted (or renewed) with a shorter
-- lease must not expire the keys that hold other calls' longer leases. A key without an expiry gets one.
local function extend(key, ms)
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or (ttl >= 0 and ttl < ms) then redis.call('PEXPIRE', key, ms) end
end
local function bucket(base, now, tpm)
  local state = redis.call('HMGET', base .. ':tok', 'level', 'at')
  local level = tonumber(state[1] or '0') or 0
  local at = tonumber(state[2] or tostring(now)) or now
  level = level - (now - at) * tpm / W
  if level < 0 then level = 0 end
  return level
end
local function setBucket(base, now, tpm, level)
  if level < 0 then level = 0 end
  redis.call('HSET', base .. ':tok', 'level', level, 'at', now)
  redis.call('PEXPIRE', base .. ':tok', math.max(W, math.ceil(level * W / tpm)) + 1000)
end
`;

/**
 * Admits several calls at once (the calls that began in one event-loop turn: one round trip for all of them), in
 * the order given, each exactly as if it were alone: a later call sees what an earlier one took.
 * ARGV: admitCount, then per call: now, leaseMs, lease, tokens, costUsd, mediaUnits, scopeCount, spends (1/0),
 * then per scope 10 fields: base, rpm, tpm, maxParallel, mediaPerDay, budgetUsd, period id, day id, ms to the
 * period's end (-1: never), ms to the day's end.
 * Returns, per call, 10 values: admitted, kind, scope index, retryAfterMs, req limit, remaining, reset, tok limit,
 * remaining, reset (-1 where a rate is not limited).
 */
const ADMIT_ONE = `
local function admitOne(a)
  local now = tonumber(ARGV[a])
  local leaseMs = tonumber(ARGV[a+1])
  local lease = ARGV[a+2]
  local tokens = tonumber(ARGV[a+3])
  local cost = tonumber(ARGV[a+4])
  local media = tonumber(ARGV[a+5])
  local n = tonumber(ARGV[a+6])
  local spends = ARGV[a+7] == '1'
  local first = a + 8
  local reqL, reqR, reqT, tokL, tokR, tokT = -1, -1, -1, -1, -1, -1
  local function keepReq(l, r, t) if reqL < 0 or r < reqR then reqL, reqR, reqT = l, r, t end end
  local function keepTok(l, r, t) if tokL < 0 or r < tokR then tokL, tokR, tokT = l, r, t end end
  local levels = {}
  for i = 0, n - 1 do
    local o = first + i * 10
    local base = ARGV[o]
    local rpm, tpm, par, mpd, budget = num(ARGV[o+1]), num(ARGV[o+2]), num(ARGV[o+3]), num(ARGV[o+4]), num(ARGV[o+5])
    local period, day, periodEnds, dayEnds = ARGV[o+6], ARGV[o+7], tonumber(ARGV[o+8]), tonumber(ARGV[o+9])
    sweep(base, now, rpm, par, budget or mpd)
    local function refuse(kind, after)
      return {0, kind, i, math.max(1, math.ceil(after)), reqL, reqR, reqT, tokL, tokR, tokT}
    end
    if rpm then
      local count = redis.call('ZCARD', base .. ':req')
      local reset = W
      if count > 0 then
        local oldest = redis.call('ZRANGE', base .. ':req', 0, 0, 'WITHSCORES')
        reset = tonumber(oldest[2]) + W - now
      end
      if count + 1 > rpm then
        keepReq(rpm, 0, reset)
        return refuse('rpm', reset)
      end
      keepReq(rpm, rpm - count - 1, reset)
    end
    if tpm then
      local level = bucket(base, now, tpm)
      levels[i] = level
      local rate = tpm / W
      if tokens > 0 and level > 0 and level + tokens > tpm then
        keepTok(tpm, math.max(0, math.floor(tpm - level)), math.ceil(level / rate))
        return refuse('tpm', (level + tokens - tpm) / rate)
      end
      keepTok(tpm, math.max(0, math.floor(tpm - level - tokens)), math.ceil((level + tokens) / rate))
    end
    if par then
      local count = redis.call('ZCARD', base .. ':par')
      if count >= par then
        local oldest = redis.call('ZRANGE', base .. ':par', 0, 0, 'WITHSCORES')
        return refuse('parallel', math.min(1000, tonumber(oldest[2]) - now))
      end
    end
    if mpd and media > 0 then
      local used = tonumber(redis.call('GET', base .. ':media:' .. day) or '0')
        + tonumber(redis.call('HGET', base .. ':reserved', 'media') or '0')
      if used + media > mpd then return refuse('media', dayEnds) end
    end
    if budget and spends then
      local spent = tonumber(redis.call('GET', base .. ':spend:' .. period) or '0')
        + tonumber(redis.call('HGET', base .. ':reserved', 'cost') or '0')
      if spent >= budget then
        if periodEnds < 0 then periodEnds = dayEnds end
        return refuse('budget', periodEnds)
      end
    end
  end
  for i = 0, n - 1 do
    local o = first + i * 10
    local base = ARGV[o]
    local rpm, tpm, par, mpd, budget = num(ARGV[o+1]), num(ARGV[o+2]), num(ARGV[o+3]), num(ARGV[o+4]), num(ARGV[o+5])
    if rpm then
      redis.call('ZADD', base .. ':req', now, lease)
      extend(base .. ':req', W)
    end
    if tpm then setBucket(base, now, tpm, levels[i] + tokens) end
    if par then
      redis.call('ZADD', base .. ':par', now + leaseMs, lease)
      extend(base .. ':par', leaseMs * 2)
    end
    if (cost > 0 or media > 0) and (budget or mpd) then
      redis.call('ZADD', base .. ':res', now + leaseMs, lease)
      redis.call('HSET', base .. ':resamt', lease, tostring(cost) .. '|' .. tostring(media))
      redis.call('HINCRBYFLOAT', base .. ':reserved', 'cost', cost)
      redis.call('HINCRBYFLOAT', base .. ':reserved', 'media', media)
      for _, suffix in ipairs({':res', ':resamt', ':reserved'}) do
        extend(base .. suffix, leaseMs * 2)
      end
    end
  end
  return {1, '', -1, 0, reqL, reqR, reqT, tokL, tokR, tokT}
end
`;

export const ADMIT_SCRIPT = `${COMMON}${ADMIT_ONE}
local out = {}
local a = 2
for _ = 1, tonumber(ARGV[1]) do
  local reply = admitOne(a)
  for j = 1, 10 do out[#out + 1] = reply[j] end
  a = a + 8 + tonumber(ARGV[a+6]) * 10
end
return out
`;

/**
 * Settles several calls at once (the calls that ended in one event-loop turn: one round trip for all of them).
 * ARGV: now, settleCount, then per settle: lease, tokensDelta, costUsd, mediaUnits, scopeCount, then per scope 6
 * fields: base, tpm, period id, day id, ms the period's key lives (-1: for ever), ms the day's key lives.
 * A lease settles once: its slot and reservation go, and a lease settled again (or already expired) changes
 * nothing it held; the bucket and the settled amounts never go below 0.
 */
export const SETTLE_SCRIPT = `${COMMON}
local now = tonumber(ARGV[1])
local m = tonumber(ARGV[2])
local o = 3
for _ = 1, m do
  local lease = ARGV[o]
  local delta = tonumber(ARGV[o+1])
  local cost = tonumber(ARGV[o+2])
  local media = tonumber(ARGV[o+3])
  local n = tonumber(ARGV[o+4])
  o = o + 5
  for _ = 1, n do
    local base = ARGV[o]
    local tpm = num(ARGV[o+1])
    local period, day, periodTtl, dayTtl = ARGV[o+2], ARGV[o+3], tonumber(ARGV[o+4]), tonumber(ARGV[o+5])
    o = o + 6
    redis.call('ZREM', base .. ':par', lease)
    release(base, lease)
    if tpm and delta ~= 0 then setBucket(base, now, tpm, bucket(base, now, tpm) + delta) end
    if media > 0 and day ~= '' then
      redis.call('INCRBYFLOAT', base .. ':media:' .. day, media)
      redis.call('PEXPIRE', base .. ':media:' .. day, dayTtl)
    end
    if cost > 0 and period ~= '' then
      redis.call('INCRBYFLOAT', base .. ':spend:' .. period, cost)
      if periodTtl > 0 then redis.call('PEXPIRE', base .. ':spend:' .. period, periodTtl) end
    end
  end
end
return 1
`;

/**
 * Renews many leases at once (every call in flight on an instance, at most 1,000 leases a script call).
 * ARGV: now, leaseMs, scopeCount, then per scope: base, leaseCount, the leases.
 * Per sorted set (`:par` slots, `:res` reservations) of a scope: what already expired goes first (an expired
 * reservation is released, as an admission's sweep would), then one `ZADD XX` moves the named leases to
 * now + leaseMs; XX never adds, so a lease that expired or settled is not revived. The scope's keys then live at
 * least 2 × leaseMs, never less than they already had, so a set outlives every lease it holds.
 */
export const RENEW_SCRIPT = `${COMMON}
local now, leaseMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local score, keep = now + leaseMs, leaseMs * 2
local function renewSet(key, first, last)
  local args = {}
  for i = first, last do
    args[#args + 1] = score
    args[#args + 1] = ARGV[i]
  end
  redis.call('ZADD', key, 'XX', unpack(args))
  extend(key, keep)
end
local o = 4
for _ = 1, tonumber(ARGV[3]) do
  local base, n = ARGV[o], tonumber(ARGV[o+1])
  local first, last = o + 2, o + 1 + n
  o = last + 1
  local par = base .. ':par'
  if redis.call('EXISTS', par) == 1 then
    redis.call('ZREMRANGEBYSCORE', par, '-inf', now)
    renewSet(par, first, last)
  end
  local res = base .. ':res'
  if redis.call('EXISTS', res) == 1 then
    for _, l in ipairs(redis.call('ZRANGEBYSCORE', res, '-inf', now)) do release(base, l) end
    renewSet(res, first, last)
    extend(base .. ':resamt', keep)
    extend(base .. ':reserved', keep)
  end
end
return 1
`;

/**
 * A local allowance (redis-allowance.ts): one call's admission that also takes a block of headroom for the
 * instance, but only while every scope is far from its limits; otherwise the call is admitted exactly as
 * ADMIT_SCRIPT would (same reply), and nothing more is taken.
 * ARGV: blockId, requests N (0: no rate scope), tokens T, slots P, blockMs, then the call as one ADMIT_SCRIPT call
 * (its 8 fields, then 10 per scope; the scopes limit nothing but rpm, tpm and max_parallel).
 * Far means, per scope: requests in the window + 101 N ≤ rpm, bucket level + 101 T ≤ tpm, slots held + 101 P ≤
 * max_parallel — after the block, at least 100 blocks of headroom are left. The block is counted at once, as if
 * used: N request entries `<id>:r<i>` scored at now + blockMs (the latest a local admission may happen, so each
 * stays in the 60 s window at least as long as the request it stands for), T tokens in the bucket, P slots
 * `<id>:p<i>` as leases expiring at now + leaseMs (renewed under the names of the calls that hold them). A crashed
 * instance's block therefore ends like its calls would: slots expire, entries leave the window, tokens drain.
 * Returns ADMIT_SCRIPT's 10 values; the first is 2 when the block was taken (the call holds `<id>:r1`, `<id>:p1`
 * and T's first tokens), and the rates then count the whole block as used.
 */
export const GRANT_SCRIPT = `${COMMON}${ADMIT_ONE}
local id, N, T, P, blockMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local a = 6
local now, leaseMs, n = tonumber(ARGV[a]), tonumber(ARGV[a+1]), tonumber(ARGV[a+6])
local first = a + 8
local reqL, reqR, reqT, tokL, tokR, tokT = -1, -1, -1, -1, -1, -1
local levels = {}
for i = 0, n - 1 do
  local o = first + i * 10
  local base = ARGV[o]
  local rpm, tpm, par = num(ARGV[o+1]), num(ARGV[o+2]), num(ARGV[o+3])
  sweep(base, now, rpm, par, false)
  if rpm then
    local count = redis.call('ZCARD', base .. ':req')
    if count + 101 * N > rpm then return admitOne(a) end
    local reset = W + blockMs
    if count > 0 then
      local oldest = redis.call('ZRANGE', base .. ':req', 0, 0, 'WITHSCORES')
      reset = tonumber(oldest[2]) + W - now
    end
    local r = rpm - count - N
    if reqL < 0 or r < reqR then reqL, reqR, reqT = rpm, r, reset end
  end
  if tpm then
    local level = bucket(base, now, tpm)
    levels[i] = level
    if level + 101 * T > tpm then return admitOne(a) end
    local r = math.floor(tpm - level - T)
    if tokL < 0 or r < tokR then tokL, tokR, tokT = tpm, r, math.ceil((level + T) * W / tpm) end
  end
  if par and redis.call('ZCARD', base .. ':par') + 101 * P > par then return admitOne(a) end
end
for i = 0, n - 1 do
  local o = first + i * 10
  local base = ARGV[o]
  local rpm, tpm, par = num(ARGV[o+1]), num(ARGV[o+2]), num(ARGV[o+3])
  if rpm and N > 0 then
    local args = {}
    for j = 1, N do
      args[#args + 1] = now + blockMs
      args[#args + 1] = id .. ':r' .. j
    end
    redis.call('ZADD', base .. ':req', unpack(args))
    extend(base .. ':req', W + blockMs)
  end
  if tpm then setBucket(base, now, tpm, levels[i] + T) end
  if par and P > 0 then
    local args = {}
    for j = 1, P do
      args[#args + 1] = now + leaseMs
      args[#args + 1] = id .. ':p' .. j
    end
    redis.call('ZADD', base .. ':par', unpack(args))
    extend(base .. ':par', leaseMs * 2)
  end
end
return {2, '', -1, 0, reqL, reqR, reqT, tokL, tokR, tokT}
`;

/**
 * Gives back what blocks did not use (a block ended: its time ran out, it ran dry, or the instance closes).
 * ARGV: now, blockCount, then per block: id, N, requests used, unused tokens (negative when the calls settled above
 * the block: added), free slot count, the free slot names, scopeCount, then per scope: base, rpm, tpm.
 * Unused request entries `<id>:r<used+1..N>` and free slots leave their sets; the unused tokens leave the bucket
 * (never below empty). Slots held by calls still running stay until those calls settle under the slot's name.
 */
export const RETURN_SCRIPT = `${COMMON}
local now = tonumber(ARGV[1])
local o = 3
for _ = 1, tonumber(ARGV[2]) do
  local id, N, used, unused = ARGV[o], tonumber(ARGV[o+1]), tonumber(ARGV[o+2]), tonumber(ARGV[o+3])
  local free = tonumber(ARGV[o+4])
  local slots = {}
  for j = 1, free do slots[j] = ARGV[o+4+j] end
  o = o + 5 + free
  local n = tonumber(ARGV[o])
  o = o + 1
  for _ = 1, n do
    local base, rpm, tpm = ARGV[o], num(ARGV[o+1]), num(ARGV[o+2])
    o = o + 3
    if rpm and used < N then
      local names = {}
      for j = used + 1, N do names[#names + 1] = id .. ':r' .. j end
      redis.call('ZREM', base .. ':req', unpack(names))
    end
    if tpm and unused ~= 0 then setBucket(base, now, tpm, bucket(base, now, tpm) - unused) end
    if free > 0 then redis.call('ZREM', base .. ':par', unpack(slots)) end
  end
end
return 1
`;
