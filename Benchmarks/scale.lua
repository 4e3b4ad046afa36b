-- wrk script: hits on random URLs out of N stored ones (cache lookup cost as the cache grows).
--   N=100000 wrk -t1 -c64 -d5s -s scale.lua http://127.0.0.1:24508/
local n = tonumber(os.getenv("N") or error("set N"))
local base = "http://127.0.0.1:24999/scale/"
wrk.headers["Host"] = "127.0.0.1:24999"
math.randomseed(os.time())
request = function()
  return wrk.format("GET", base .. math.random(0, n - 1))
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p99_ms=%.3f errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.status + e.timeout))
end
