-- wrk script: send absolute-form requests (what a forward proxy receives).
--   TARGET=http://127.0.0.1:24580/1k.bin wrk -t1 -c64 -d5s -s absolute-form.lua http://127.0.0.1:24508/
local target = os.getenv("TARGET") or error("set TARGET to the origin URL")
local authority = target:match("^http://([^/]+)") or error("TARGET must be http://host:port/path")
wrk.method = "GET"
wrk.path = target
wrk.headers["Host"] = authority
-- EXTRA_HEADER="Sluice-Strip-Nulls: 1" adds one request header.
local extra = os.getenv("EXTRA_HEADER")
if extra and extra ~= "" then
  local name, value = extra:match("^([^:]+):%s*(.*)$")
  wrk.headers[name] = value
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p99_ms=%.3f errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end
