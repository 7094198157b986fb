/**
 * A real `python -m verdict serve` child on free ports. Tests start one in `before` and stop it in `after`; a
 * SIGTERM is followed by SIGKILL if the server has not exited in 20 s, and an exit hook kills a server a crashed
 * test run left behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

export const REPO_ROOT = join(__dirname, "..", "..", "..", "..");

export interface RunningServer {
  target: string;
  grpcPort: number;
  stop(): Promise<void>;
}

function python(): string {
  const override = process.env.VERDICT_PYTHON;
  if (override) return override;
  const venv = join(REPO_ROOT, ".venv", "bin", "python");
  if (!existsSync(venv)) throw new Error(`no ${venv}: run \`make install\` (or set VERDICT_PYTHON)`);
  return venv;
}

export function startServer(readyTimeoutMs = 60_000, extraArgs: string[] = []): Promise<RunningServer> {
  const child = spawn(
    python(),
    [
      "-m", "verdict", "serve", "--grpc-address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0",
      "--log-format", "json", ...extraArgs,
    ],
    { cwd: REPO_ROOT, stdio: ["ignore", "ignore", "pipe"] },
  );
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`verdict serve not ready after ${readyTimeoutMs} ms:\n${stderr}`));
    }, readyTimeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`verdict serve exited with ${code} before it was ready:\n${stderr}`));
    });
    // The server logs JSON records on stderr; its ready record has event "serving" and the bound ports.
    const lines = createInterface({ input: child.stderr! });
    lines.on("line", (line) => {
      let ready: { event?: string; grpc_port?: number };
      try {
        ready = JSON.parse(line) as typeof ready;
      } catch {
        return;
      }
      if (ready.event !== "serving" || typeof ready.grpc_port !== "number") return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({
        target: `127.0.0.1:${ready.grpc_port}`,
        grpcPort: ready.grpc_port,
        stop: () => stop(child).finally(() => process.removeListener("exit", killOnExit)),
      });
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
