# Tiny KServe v2 models served by the (reconstructed) kserve ModelServer on loopback.
import sys
# The kserve package must be importable (pip install kserve where PyPI is reachable).
import uuid
import numpy as np
from kserve import Model, ModelServer, InferRequest, InferResponse, InferOutput


class Echo(Model):
    """identity: FP32 [1,16] INPUT0 -> OUTPUT0 (same)"""
    def __init__(self):
        super().__init__("echo")
        self.load()

    def get_input_types(self):
        return [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16]}]

    def get_output_types(self):
        return [{"name": "OUTPUT0", "datatype": "FP32", "shape": [1, 16]}]

    async def predict(self, payload: InferRequest, headers=None, response_headers=None):
        x = payload.inputs[0].as_numpy().astype(np.float32)
        out = InferOutput(name="OUTPUT0", shape=list(x.shape), datatype="FP32")
        out.set_data_from_numpy(x, binary_data=False)
        return InferResponse(response_id=payload.id or str(uuid.uuid4()), model_name=self.name, infer_outputs=[out],
                             use_binary_outputs=payload.use_binary_outputs,
                             requested_outputs=payload.request_outputs)


class Multi(Model):
    """INPUT0 FP32 [1,16] -> SUM INT32 [1] (sum as int) and TEXT BYTES [2]"""
    def __init__(self):
        super().__init__("multi")
        self.load()

    def get_input_types(self):
        return [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16]}]

    def get_output_types(self):
        return [{"name": "SUM", "datatype": "INT32", "shape": [1]},
                {"name": "TEXT", "datatype": "BYTES", "shape": [2]}]

    async def predict(self, payload: InferRequest, headers=None, response_headers=None):
        x = payload.inputs[0].as_numpy().astype(np.float32)
        s = InferOutput(name="SUM", shape=[1], datatype="INT32")
        s.set_data_from_numpy(np.array([int(x.sum())], dtype=np.int32), binary_data=False)
        t = InferOutput(name="TEXT", shape=[2], datatype="BYTES")
        t.set_data_from_numpy(np.array([b"hello", b"kserve"], dtype=np.object_), binary_data=False)
        return InferResponse(response_id=payload.id or str(uuid.uuid4()), model_name=self.name, infer_outputs=[s, t],
                             use_binary_outputs=payload.use_binary_outputs,
                             requested_outputs=payload.request_outputs)


if __name__ == "__main__":
    http_port, grpc_port = int(sys.argv[1]), int(sys.argv[2])
    ModelServer(http_port=http_port, grpc_port=grpc_port, http_host="127.0.0.1",
                grpc_host="127.0.0.1").start([Echo(), Multi()])
