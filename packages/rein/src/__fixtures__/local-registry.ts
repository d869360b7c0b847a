/**
 * A package registry on 127.0.0.1 that speaks the npm registry's wire
 * format (packuments and tarballs), serving this workspace's packed
 * tarballs and every third-party package they need, re-packed from the
 * workspace's own `node_modules`. With it, `npm install` of the packed
 * packages runs in a scratch project exactly as a user's install does,
 * without the network.
 *
 * A third-party package is packed when a client first asks for its
 * packument, not before: npm never asks for most of what an optional peer
 * (the MCP SDK) would bring in, and packing all of it cost more than half
 * of the registry's CPU.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, dirname, join } from "node:path";

/** A running registry. */
export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** name@version of every package served. */
  readonly served: readonly string[];
  /** Every path a client asked for (so a test can tell what npm fetched). */
  readonly requested: readonly string[];
  /** Why the registry answered 500 to a request (a package it could not pack), for the test's error message. */
  readonly failures: readonly string[];
  close(): Promise<void>;
}

interface Entry {
  readonly manifest: Record<string, unknown>;
  /** The tarball; for a third-party package, where it is packed at the first request for its packument. */
  readonly file: string;
  /** The directory to pack into `file`, until it is packed. */
  unpacked?: string;
  /** The tarball's checksums, computed once. */
  checksums?: { shasum: string; integrity: string };
}

type Manifest = {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

function readManifest(directory: string): Manifest {
  return JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as Manifest;
}

/** Node's lookup of `name` from `from`: the nearest `node_modules/<name>`, resolved through pnpm's links. */
function findPackage(from: string, name: string): string | undefined {
  let directory = from;
  for (;;) {
    const candidate = join(directory, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    const parent = dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

/** The dependencies an install of `manifest` fetches: regular, optional (when present here) and required peers. */
function wanted(manifest: Manifest): { name: string; required: boolean }[] {
  const list: { name: string; required: boolean }[] = [];
  for (const name of Object.keys(manifest.dependencies ?? {})) list.push({ name, required: true });
  for (const name of Object.keys(manifest.optionalDependencies ?? {})) list.push({ name, required: false });
  for (const name of Object.keys(manifest.peerDependencies ?? {})) {
    list.push({ name, required: manifest.peerDependenciesMeta?.[name]?.optional !== true });
  }
  return list;
}

function checksumsOf(file: string): { shasum: string; integrity: string } {
  const bytes = readFileSync(file);
  return {
    shasum: createHash("sha1").update(bytes).digest("hex"),
    integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
  };
}

/**
 * Starts the registry. `workspacePackages` are the directories of the
 * workspace packages whose tarballs are in `tarballs`; their third-party
 * dependencies (and those dependencies' own, transitively) are packed into
 * `workDir` from wherever the workspace installed them. A dependency an
 * install needs that is missing here is an error naming it.
 */
export async function startLocalRegistry(options: {
  readonly workspacePackages: readonly string[];
  readonly tarballs: readonly string[];
  readonly workDir: string;
  /** Other packages to serve (with their dependencies), looked up from `from` (e.g. tsx from the repository root). */
  readonly extra?: readonly { readonly from: string; readonly name: string }[];
}): Promise<LocalRegistry> {
  const packuments = new Map<string, Map<string, Entry>>();
  const add = (manifest: Manifest, file: string, unpacked?: string): void => {
    let versions = packuments.get(manifest.name);
    if (versions === undefined) packuments.set(manifest.name, (versions = new Map()));
    versions.set(manifest.version, { manifest: manifest as unknown as Record<string, unknown>, file, unpacked });
  };

  const ownNames = new Set<string>();
  for (const tarball of options.tarballs) {
    const manifest = JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" })) as Manifest;
    ownNames.add(manifest.name);
    add(manifest, tarball);
  }

  mkdirSync(options.workDir, { recursive: true });
  const seen = new Set<string>();
  const queue: { from: string; name: string; required: boolean; by: string }[] = [];
  for (const directory of options.workspacePackages) {
    const manifest = readManifest(directory);
    for (const dependency of wanted(manifest)) {
      if (!ownNames.has(dependency.name)) queue.push({ from: directory, ...dependency, by: manifest.name });
    }
  }
  for (const { from, name } of options.extra ?? []) queue.push({ from, name, required: true, by: "the test" });
  while (queue.length > 0) {
    const { from, name, required, by } = queue.shift()!;
    const directory = findPackage(from, name);
    if (directory === undefined) {
      if (required) throw new Error(`local registry: ${by} needs ${name}, which is not installed in this workspace`);
      continue; // an optional package for another platform
    }
    if (seen.has(directory)) continue;
    seen.add(directory);
    const manifest = readManifest(directory);
    add(manifest, join(options.workDir, `${manifest.name.replace("/", "+")}-${manifest.version}.tar`), directory);
    for (const dependency of wanted(manifest)) queue.push({ from: directory, ...dependency, by: manifest.name });
  }

  const requested: string[] = [];
  const failures: string[] = [];
  let base = "";
  /** The entry's tarball, packed now if it was not yet; its checksums. */
  const pack = (entry: Entry): { shasum: string; integrity: string } => {
    if (entry.unpacked !== undefined) {
      packDirectory(entry.unpacked, entry.file);
      entry.unpacked = undefined;
    }
    return (entry.checksums ??= checksumsOf(entry.file));
  };
  const answer = (path: string, response: ServerResponse): void => {
    if (path.startsWith("-/tarballs/")) {
      const entry = [...packuments.values()].flatMap((versions) => [...versions.values()]).find((item) => basename(item.file) === basename(path));
      if (entry === undefined) {
        response.writeHead(404).end();
        return;
      }
      pack(entry);
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(entry.file));
      return;
    }
    const versions = packuments.get(path);
    if (versions === undefined) {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not_found" }));
      return;
    }
    const body: Record<string, unknown> = { name: path, "dist-tags": { latest: [...versions.keys()].at(-1) }, versions: {} };
    for (const [version, entry] of versions) {
      (body["versions"] as Record<string, unknown>)[version] = {
        ...entry.manifest,
        dist: { tarball: `${base}-/tarballs/${basename(entry.file)}`, ...pack(entry) },
      };
    }
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? "/").split("?")[0]!.slice(1));
    requested.push(path);
    try {
      answer(path, response);
    } catch (error) {
      failures.push(`${path}: ${(error as Error).message}`);
      response.writeHead(500, { "content-type": "text/plain" }).end((error as Error).message);
    }
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    served: [...packuments.entries()].flatMap(([name, versions]) => [...versions.keys()].map((version) => `${name}@${version}`)),
    requested,
    failures,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

/**
 * `tar -cf file -C directory .` as `package/...`. GNU tar exits 1 with "file changed as we read it" when a file's
 * ctime moves during the read: the installed packages are hard links into pnpm's store, so another install on the
 * machine linking the same file does that (seen with two `pnpm test` runs at once). The bytes read are complete then,
 * so that one warning is accepted; any other failure throws.
 *
 * Not compressed: npm reads a plain tar as it reads a gzipped one (its tar reader looks for gzip's header), and
 * compressing cost about as much CPU as the rest of the registry. This workspace's own tarballs are `pnpm pack`'s
 * gzipped files, served as they are.
 */
function packDirectory(directory: string, file: string): void {
  const packed = spawnSync("tar", ["-cf", file, "-C", directory, "--hard-dereference", "--exclude=./node_modules", "--transform", "s,^\\.,package,", "."], { encoding: "utf8" });
  const otherWarnings = packed.stderr.split("\n").filter((line) => line !== "" && !/file changed as we read it$/.test(line));
  if (packed.error !== undefined || !(packed.status === 0 || (packed.status === 1 && otherWarnings.length === 0))) {
    throw new Error(`tar of ${directory} failed (${packed.status ?? packed.error?.message}): ${packed.stderr}`);
  }
}
