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


def check(
    address: str, service: str, timeout: float, *, ca_file: str | None = None, server_name: str | None = None
) -> str:
    """The health status name the server reports for `service`, or the gRPC status code name if the call fails.
    With `ca_file` the probe speaks TLS (a server with tls_cert_file and no health_address); health never needs a
    token, but a server with `tls_client_auth: require` refuses any connection without a client certificate, so
    such a server needs health_address for its probes."""
    if ca_file:
        with open(ca_file, "rb") as f:
            credentials = grpc.ssl_channel_credentials(f.read())
        options = [("grpc.ssl_target_name_override", server_name)] if server_name else []
        channel = grpc.secure_channel(address, credentials, options=options)
    else:
        channel = grpc.insecure_channel(address)
    with channel:
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
    parser.add_argument("--ca-file", help="speak TLS, verifying the server with these PEM roots")
    parser.add_argument("--server-name", help="with --ca-file: host name expected in the server certificate")
    args = parser.parse_args(argv)
    status = check(args.address, args.service, args.timeout, ca_file=args.ca_file, server_name=args.server_name)
    print(f"{args.service or '<server>'}: {status}")
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
