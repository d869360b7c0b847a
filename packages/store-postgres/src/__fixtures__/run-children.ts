import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileScript } from "../../../session/src/__fixtures__/compiled-script";

const ROOT = join(__dirname, "..", "..", "..", "..");

/**
 * Runs `count` store-child.ts processes with the given arguments and resolves with the JSON line each printed.
 * The children run the script compiled once into one JavaScript file (core's `compileScript`: esbuild, as tsx
 * would transform it), not a tsx process each.
 */
export async function runStoreChildren<T>(count: number, args: readonly string[]): Promise<T[]> {
  const scratch = mkdtempSync(join(tmpdir(), "rein-store-child-"));
  try {
    const compiled = compileScript(join(__dirname, "store-child.ts"), scratch);
    return await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<T>((resolve, reject) => {
            const child = spawn(process.execPath, [...compiled.nodeArgs, ...args], { cwd: ROOT, env: { ...process.env, ...compiled.env }, stdio: ["ignore", "pipe", "pipe"] });
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
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
