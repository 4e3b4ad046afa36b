-- wrk script: absolute-form requests for distinct URLs, the same sequence on every run
-- (TARGET?u=1, ?u=2, …; one wrk thread), so that one run can fill a cache and a later run can
-- ask for exactly those URLs again.
--   TARGET=http://127.0.0.1:24580/1k.bin wrk -t1 -c64 -d5s -s unique.lua http://127.0.0.1:24508/
local target = os.getenv("TARGET") or error("set TARGET to the origin URL")
local authority = target:match("^http://([^/]+)") or error("TARGET must be http://host:port/path")
wrk.method = "GET"
wrk.headers["Host"] = authority
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, target .. "?u=" .. n)
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f requests=%d p50_ms=%.3f p99_ms=%.3f errors=%d\n",
    summary.requests / (summary.duration / 1e6), summary.requests, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end
