"""Ask a Verdict server's gRPC health service about one name; exit 0 only when it answers SERVING.

Kubernetes' native gRPC probes dial the pod IP, so they cannot reach a server that listens on localhost only, as Verdict
does in the sidecar overlay (deploy/overlays/sidecar): there the probes run this file as an exec probe inside the
container. The image's Docker HEALTHCHECK uses it too. It costs one Python start with grpc imported (about 0.15 s of
CPU on a machine like CI's), which is why the other overlays keep the native probes.

    python health_probe.py --address 127.0.0.1:50051 --service liveness
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

__all__ = ["check", "main"]


def check(address: str, service: str, timeout: float) -> str:
    """The health status name the server reports for `service`, or the gRPC status code name if the call fails."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as error:
            return str(error.code().name)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--address", default="127.0.0.1:50051", help="host:port of the gRPC server")
    parser.add_argument("--service", default="", help='health name to ask about ("" is the whole server)')
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for the answer")
    args = parser.parse_args(argv)
    status = check(args.address, args.service, args.timeout)
    print(f"{args.service or '<server>'}: {status}")
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
