import { spawn } from "node:child_process";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..", "..", "..");

/**
 * Runs `count` store-child.ts processes (through tsx, from source) with the
 * given arguments and resolves with the JSON line each printed.
 */
export function runStoreChildren<T>(count: number, args: readonly string[]): Promise<T[]> {
  const tsx = join(ROOT, "node_modules", ".bin", "tsx");
  const script = join(__dirname, "store-child.ts");
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<T>((resolve, reject) => {
          const child = spawn(tsx, ["--tsconfig", join(ROOT, "tsconfig.test.json"), script, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
          let output = "";
          let errors = "";
          child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
          child.on("exit", (code) => {
            if (code !== 0) return reject(new Error(`store-child exited ${code}: ${errors}`));
            resolve(JSON.parse(output.trim().split("\n").pop()!) as T);
          });
        }),
    ),
  );
}
