"""The client's generated verdict.v1 messages and stub, public: build a typed `EvaluatorConfig` or read a field a
newer server added at `.raw`.

They are generated into `verdict_client._proto` (from the same proto as the server's, by `make protos`) so that the
client installs alone and never clashes with the server's own `verdict.v1` package; both register the same
descriptors, so messages of either are the same classes in a process that has both.
"""

from verdict_client._proto.verdict.v1 import verdict_pb2, verdict_pb2_grpc

__all__ = ["verdict_pb2", "verdict_pb2_grpc"]
