#!/usr/bin/env python3
"""Writes the request every peer sends to model "null": one FP32 [1,16]
sample, as loadgend encodes it (binary extension asking for binary outputs),
as pure JSON, and as ghz's JSON form of ModelInferRequest. Usage:
peers_body.py DIR  -> DIR/body.bin, DIR/body.json, DIR/ghz.json, DIR/hlen."""
import base64, json, os, sys

d = sys.argv[1]
head = json.dumps({"parameters": {"binary_data_output": True},
                   "inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "FP32",
                               "parameters": {"binary_data_size": 64}}]},
                  separators=(",", ":")).encode()
open(os.path.join(d, "body.bin"), "wb").write(head + bytes(64))
open(os.path.join(d, "hlen"), "w").write(str(len(head)))
open(os.path.join(d, "body.json"), "w").write(json.dumps(
    {"inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "FP32", "data": [0.0] * 16}]},
    separators=(",", ":")))
open(os.path.join(d, "ghz.json"), "w").write(json.dumps(
    {"model_name": "null", "inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16]}],
     "raw_input_contents": [base64.b64encode(bytes(64)).decode()]}))
