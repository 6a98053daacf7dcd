#!/usr/bin/python3
"""Check sutproxy against NVIDIA's tritonclient (HTTP binary + JSON, gRPC)."""
import sys, traceback
import numpy as np
import tritonclient.http as httpclient
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

import os
HTTP_URL = os.environ.get("HTTP_URL", "127.0.0.1:18000")
GRPC_URL = os.environ.get("GRPC_URL", "127.0.0.1:18001")
results = []


def check(name, fn):
    try:
        detail = fn()
        results.append(True)
        print(f"PASS  {name}" + (f"  ({detail})" if detail else ""))
    except Exception as e:  # noqa
        results.append(False)
        print(f"FAIL  {name}: {type(e).__name__}: {e}")
        traceback.print_exc(limit=3, file=sys.stdout)


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


a = np.arange(16, dtype=np.int32).reshape(1, 16)
b = np.full((1, 16), 3, dtype=np.int32)
f = (np.arange(16, dtype=np.float32) * 0.5 - 2.25).reshape(1, 16)

# ---------------- HTTP ----------------
hc = httpclient.InferenceServerClient(HTTP_URL)
P = "http "
check(P + "is_server_live", lambda: expect(hc.is_server_live() is True, "not live"))
check(P + "is_server_ready", lambda: expect(hc.is_server_ready() is True, "not ready"))


def h_server_md():
    md = hc.get_server_metadata()
    expect("name" in md and "version" in md and isinstance(md.get("extensions"), list), md)
    return md


check(P + "get_server_metadata", h_server_md)


def h_model_md():
    md = hc.get_model_metadata("simple")
    expect(md["name"] == "simple", md)
    ins = {t["name"]: t for t in md["inputs"]}
    outs = {t["name"]: t for t in md["outputs"]}
    expect(set(ins) == {"INPUT0", "INPUT1"} and set(outs) == {"OUTPUT0", "OUTPUT1"}, md)
    expect(ins["INPUT0"]["datatype"] == "INT32" and ins["INPUT0"]["shape"] == [-1, 16], md)
    return f"versions={md.get('versions')} platform={md.get('platform')}"


check(P + "get_model_metadata('simple')", h_model_md)


def h_model_cfg():
    cfg = hc.get_model_config("simple")
    expect(cfg["name"] == "simple" and cfg["max_batch_size"] == 8, cfg)
    i0 = [i for i in cfg["input"] if i["name"] == "INPUT0"][0]
    expect(i0["data_type"] == "TYPE_INT32" and list(i0["dims"]) == [16], i0)
    return f"max_batch_size=8 input0={i0}"


check(P + "get_model_config('simple')", h_model_cfg)
check(P + "is_model_ready('simple')", lambda: expect(hc.is_model_ready("simple") is True, "not ready"))
check(P + "is_model_ready('nope') is False", lambda: expect(hc.is_model_ready("nope") is False, "ready?!"))


def h_stats():
    s = hc.get_inference_statistics("simple")["model_stats"][0]
    return int(s["inference_stats"]["success"]["count"]), int(s["inference_count"]), int(s["execution_count"])


stats0 = {}
check(P + "get_inference_statistics('simple') before", lambda: stats0.setdefault("h", h_stats()))


def h_infer_simple(binary):
    i0 = httpclient.InferInput("INPUT0", [1, 16], "INT32")
    i1 = httpclient.InferInput("INPUT1", [1, 16], "INT32")
    i0.set_data_from_numpy(a, binary_data=binary)
    i1.set_data_from_numpy(b, binary_data=binary)
    outs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary),
            httpclient.InferRequestedOutput("OUTPUT1", binary_data=binary)]
    r = hc.infer("simple", [i0, i1], outputs=outs, request_id="req-1")
    o0, o1 = r.as_numpy("OUTPUT0"), r.as_numpy("OUTPUT1")
    expect(o0 is not None and o1 is not None, r.get_response())
    expect(o0.dtype == np.int32 and o0.shape == (1, 16), (o0.dtype, o0.shape))
    expect(np.array_equal(o0, a + b), o0)
    expect(np.array_equal(o1, a - b), o1)
    resp = r.get_response()
    return f"id={resp.get('id')} model={resp.get('model_name')}/{resp.get('model_version')}"


check(P + "infer simple binary_data=True", lambda: h_infer_simple(True))
check(P + "infer simple binary_data=False (JSON)", lambda: h_infer_simple(False))


def h_infer_simple_default_outputs():
    i0 = httpclient.InferInput("INPUT0", [1, 16], "INT32")
    i1 = httpclient.InferInput("INPUT1", [1, 16], "INT32")
    i0.set_data_from_numpy(a)
    i1.set_data_from_numpy(b)
    r = hc.infer("simple", [i0, i1])  # no outputs -> parameters.binary_data_output=true
    expect(np.array_equal(r.as_numpy("OUTPUT0"), a + b), "OUTPUT0")
    expect(np.array_equal(r.as_numpy("OUTPUT1"), a - b), "OUTPUT1")


check(P + "infer simple no outputs (binary_data_output)", h_infer_simple_default_outputs)


def h_infer_identity(binary):
    i0 = httpclient.InferInput("INPUT0", [1, 16], "FP32")
    i0.set_data_from_numpy(f, binary_data=binary)
    r = hc.infer("identity", [i0], outputs=[httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)])
    o = r.as_numpy("OUTPUT0")
    expect(o.dtype == np.float32 and np.array_equal(o, f), o)


check(P + "infer identity FP32 binary", lambda: h_infer_identity(True))
check(P + "infer identity FP32 JSON", lambda: h_infer_identity(False))


def h_stats_grew():
    s1 = h_stats()
    s0 = stats0["h"]
    expect(s1[0] >= s0[0] + 3 and s1[1] >= s0[1] + 3, f"{s0} -> {s1}")
    return f"success,inference,execution {s0} -> {s1}"


check(P + "get_inference_statistics('simple') grew", h_stats_grew)


def h_err(fn):
    try:
        fn()
    except InferenceServerException as e:
        expect("nope" in str(e) or "unknown" in str(e).lower() or "not found" in str(e).lower(), str(e))
        return f"msg={e.message()!r} status={e.status()!r}"
    raise AssertionError("no exception")


def h_bad_infer():
    i0 = httpclient.InferInput("INPUT0", [1, 16], "FP32")
    i0.set_data_from_numpy(f)
    hc.infer("nope", [i0])


check(P + "error get_model_metadata('nope')", lambda: h_err(lambda: hc.get_model_metadata("nope")))
check(P + "error infer('nope')", lambda: h_err(h_bad_infer))


def h_raw_404():
    r = hc._get("v2/models/nope", None, None)
    body = r.read()
    expect(r.status_code == 404, (r.status_code, body))
    return f"HTTP {r.status_code} {body.decode()}"


check(P + "unknown model -> HTTP 404", h_raw_404)
hc.close()

# ---------------- gRPC ----------------
gc = grpcclient.InferenceServerClient(GRPC_URL)
P = "grpc "
check(P + "is_server_live", lambda: expect(gc.is_server_live() is True, "not live"))
check(P + "is_server_ready", lambda: expect(gc.is_server_ready() is True, "not ready"))


def g_server_md():
    md = gc.get_server_metadata()
    expect(md.name != "", md)
    return gc.get_server_metadata(as_json=True)


check(P + "get_server_metadata", g_server_md)


def g_model_md():
    md = gc.get_model_metadata("simple")
    expect(md.name == "simple", md)
    ins = {t.name: t for t in md.inputs}
    expect(set(ins) == {"INPUT0", "INPUT1"} and {t.name for t in md.outputs} == {"OUTPUT0", "OUTPUT1"}, md)
    expect(ins["INPUT0"].datatype == "INT32" and list(ins["INPUT0"].shape) == [-1, 16], md)
    gc.get_model_metadata("simple", as_json=True)
    return f"versions={list(md.versions)} platform={md.platform}"


check(P + "get_model_metadata('simple')", g_model_md)


def g_model_cfg():
    cfg = gc.get_model_config("simple").config
    expect(cfg.name == "simple" and cfg.max_batch_size == 8, cfg)
    i0 = [i for i in cfg.input if i.name == "INPUT0"][0]
    expect(i0.data_type == grpcclient.model_config_pb2.TYPE_INT32 and list(i0.dims) == [16], i0)
    js = gc.get_model_config("simple", as_json=True)
    return f"json={js}"


check(P + "get_model_config('simple')", g_model_cfg)
check(P + "is_model_ready('simple')", lambda: expect(gc.is_model_ready("simple") is True, "not ready"))


def g_model_ready_unknown():
    try:
        r = gc.is_model_ready("nope")
        expect(r is False, r)
        return "False"
    except InferenceServerException as e:
        return f"raised {e.status()} {e.message()!r}"


check(P + "is_model_ready('nope') not ready", g_model_ready_unknown)


def g_stats():
    s = gc.get_inference_statistics("simple").model_stats[0]
    return s.inference_stats.success.count, s.inference_count, s.execution_count


check(P + "get_inference_statistics('simple') before", lambda: stats0.setdefault("g", g_stats()))


def g_infer_simple(with_outputs):
    i0 = grpcclient.InferInput("INPUT0", [1, 16], "INT32")
    i1 = grpcclient.InferInput("INPUT1", [1, 16], "INT32")
    i0.set_data_from_numpy(a)
    i1.set_data_from_numpy(b)
    outs = [grpcclient.InferRequestedOutput("OUTPUT0"), grpcclient.InferRequestedOutput("OUTPUT1")] if with_outputs else None
    r = gc.infer("simple", [i0, i1], outputs=outs, request_id="g-1")
    o0, o1 = r.as_numpy("OUTPUT0"), r.as_numpy("OUTPUT1")
    expect(o0 is not None and o1 is not None, r.get_response())
    expect(o0.dtype == np.int32 and o0.shape == (1, 16), (o0.dtype, o0.shape))
    expect(np.array_equal(o0, a + b) and np.array_equal(o1, a - b), (o0, o1))
    resp = r.get_response()
    return f"id={resp.id} model={resp.model_name}/{resp.model_version} raw_outputs={len(resp.raw_output_contents)}"


check(P + "infer simple (outputs requested)", lambda: g_infer_simple(True))
check(P + "infer simple (no outputs requested)", lambda: g_infer_simple(False))


def g_infer_identity():
    i0 = grpcclient.InferInput("INPUT0", [1, 16], "FP32")
    i0.set_data_from_numpy(f)
    r = gc.infer("identity", [i0], outputs=[grpcclient.InferRequestedOutput("OUTPUT0")])
    o = r.as_numpy("OUTPUT0")
    expect(o.dtype == np.float32 and np.array_equal(o, f), o)


check(P + "infer identity FP32", g_infer_identity)


def g_stats_grew():
    s1 = g_stats()
    s0 = stats0["g"]
    expect(s1[0] >= s0[0] + 2 and s1[1] >= s0[1] + 2, f"{s0} -> {s1}")
    gc.get_inference_statistics("simple", as_json=True)
    return f"success,inference,execution {s0} -> {s1}"


check(P + "get_inference_statistics('simple') grew", g_stats_grew)


def g_err(fn):
    try:
        fn()
    except InferenceServerException as e:
        expect(e.status() == "StatusCode.NOT_FOUND", f"status={e.status()} msg={e.message()}")
        return f"status={e.status()} msg={e.message()!r}"
    raise AssertionError("no exception")


def g_bad_infer():
    i0 = grpcclient.InferInput("INPUT0", [1, 16], "FP32")
    i0.set_data_from_numpy(f)
    gc.infer("nope", [i0])


check(P + "error get_model_metadata('nope') NOT_FOUND", lambda: g_err(lambda: gc.get_model_metadata("nope")))
check(P + "error infer('nope') NOT_FOUND", lambda: g_err(g_bad_infer))
gc.close()

print(f"\n{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
