import { existsSync } from "node:fs";
import { dirname, extname } from "node:path";
import { pathToFileURL } from "node:url";
import { CliUsageError } from "./exit-codes";

const TYPESCRIPT = [".ts", ".mts", ".cts"];

/** Whether the module is TypeScript and so needs tsx to load. */
export function isTypeScript(modulePath: string): boolean {
  return TYPESCRIPT.includes(extname(modulePath));
}

/**
 * Where tsx's CommonJS hook is: looked up from the module's own folder
 * first (the user's project), then from the CLI's. A TypeScript module
 * without tsx is a usage error saying what to install.
 */
export function tsxHook(modulePath: string): string {
  try {
    return require.resolve("tsx/cjs", { paths: [dirname(modulePath), __dirname] });
  } catch {
    throw new CliUsageError(
      `${modulePath} is TypeScript, which rein loads through tsx: install it in your project (npm install -D tsx) or point rein at the compiled JavaScript`,
    );
  }
}

/**
 * Loads a module by absolute path: `require()` for CommonJS (and for
 * TypeScript once tsx's hook is registered), `import()` for an ES module.
 */
export async function loadModule(modulePath: string): Promise<Record<string, unknown>> {
  if (!existsSync(modulePath)) throw new CliUsageError(`module not found: ${modulePath}`);
  try {
    return require(modulePath) as Record<string, unknown>;
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_REQUIRE_ESM") throw error;
    return (await import(pathToFileURL(modulePath).href)) as Record<string, unknown>;
  }
}

/** A module's `entries` export, checked to be an object (each entry is checked by its user). */
export function entriesOf(loaded: Record<string, unknown>, modulePath: string): Record<string, unknown> {
  const entries = loaded["entries"];
  if (entries === undefined || entries === null || typeof entries !== "object") {
    throw new CliUsageError(`${modulePath} exports no \`entries\` (export const entries = { name: [AgentClass, "method"] })`);
  }
  return entries as Record<string, unknown>;
}
