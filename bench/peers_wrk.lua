-- wrk: POST the KServe binary infer body of peers_body.py (path in BODY,
-- Inference-Header-Content-Length in HLEN) on every request.
local f = assert(io.open(os.getenv("BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["Inference-Header-Content-Length"] = os.getenv("HLEN")
