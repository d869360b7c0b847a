/**
 * The commit of the Postgres store's worker: a batch of appends and updates
 * applied in one transaction under the session row's lock, with `seq`
 * allocated there, the lease fences checked and one multi-row write. The
 * same code serves the synchronous path (in the worker thread) and the
 * asynchronous one (on a pooled connection in the store's thread, see
 * `postgres-async-writes.ts`). Runs through the worker's connection
 * (`postgres-worker-database.ts`).
 *
 * Started from its source text like the rest of the worker
 * (`postgres-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { PostgresWorkerDatabase, PostgresWorkerRow } from "./postgres-worker-database";
import type { PostgresPoolData, PostgresWorkerData } from "./postgres-worker-protocol";
import type { PostgresWorkerRuns } from "./postgres-worker-runs";

/** The commit operation, its arguments as the request carries them (see {@link postgresWorkerCommit}). @internal */
export type PostgresWorkerCommit = (
  sessionId: string,
  operations: readonly PostgresWorkerRow[],
  reportStored: boolean,
  fences?: readonly (readonly [string, number])[] | null,
) => Promise<[string, number][]>;

/**
 * The commit, its lease fences checked through `checkFences` (see
 * `postgres-worker-runs.ts`). Self-contained: see the file comment.
 * @internal
 */
export function postgresWorkerCommit(
  db: PostgresWorkerDatabase,
  data: PostgresWorkerData | PostgresPoolData,
  checkFences: PostgresWorkerRuns["checkFences"],
): PostgresWorkerCommit {
  type Row = PostgresWorkerRow;
  const { query } = db;
  const S = data.schema;

  /**
   * Applies a commit in one transaction (see `PostgresSessionStore.commit`
   * for the rules). Appends are `["a", id, seq, createdAt, role, name,
   * input, output, caller, predecessor, metadata]`, updates `["u", id, name
   * | null, hasInput, input, hasOutput, output, metadataSet | null,
   * metadataRemove | null]`; values as JSON text. With `reportStored`, a
   * node found already stored is reported with its stored `seq` (a retry
   * of a commit whose reply was lost). `fences` (`[runId, epoch]` pairs):
   * the runs' rows are read `FOR SHARE`, so no claim moves an epoch before
   * this transaction ends, and a run at another epoch refuses the commit.
   */
  async function commit(sessionId: string, operations: readonly Row[], reportStored: boolean, fences: readonly (readonly [string, number])[] | null = null): Promise<[string, number][]> {
    return db.transaction(async (c) => {
      if (fences !== null) await checkFences(c, fences);
      const ids = [...new Set(operations.map((operation) => operation[1] as string))];
      // The session row's lock orders the commits of every writer in every
      // process; last_seq is read under it, so seq never repeats.
      const [session] = (
        await query(
          c,
          `SELECT s.head_id, s.last_seq, (SELECT coalesce(json_agg(json_build_array(n.id, n.seq, n.created_at, n.role, n.name, n.caller, n.predecessor)), '[]')::text ` +
            `FROM ${S}.nodes n WHERE n.session_id = $1 AND n.id = ANY($2::text[])) FROM ${S}.sessions s WHERE s.id = $1 FOR UPDATE OF s`,
          [sessionId, ids],
        )
      ).rows;
      if (session === undefined) throw db.sessionNotFound(sessionId);
      let headId = session[0] as string | null;
      let lastSeq = Number(session[1]);
      const stored = new Map<string, Row>();
      for (const found of JSON.parse(session[2] as string) as Row[]) stored.set(found[0] as string, found);
      const appended = new Map<string, unknown[]>();
      const updates = new Map<string, { name: string | null; hasInput: boolean; input: unknown; hasOutput: boolean; output: unknown; set: Record<string, unknown>; remove: Set<string> }>();
      const seqs: [string, number][] = [];
      for (const operation of operations) {
        const id = operation[1] as string;
        if (operation[0] === "a") {
          const earlier = stored.get(id);
          const prior = earlier ?? appended.get(id);
          if (prior !== undefined) {
            // [id, seq, createdAt, role, name, caller, predecessor] against the append's fields.
            const previous = earlier !== undefined ? prior : [prior[0], prior[1], prior[2], prior[3], prior[4], prior[7], prior[8]];
            const same =
              Number(previous[2]) === operation[3] &&
              previous[3] === operation[4] &&
              previous[4] === operation[5] &&
              previous[5] === operation[8] &&
              previous[6] === operation[9];
            if (!same) throw db.fault("node-conflict", "id taken", { sessionId, nodeId: id });
            if (reportStored && earlier !== undefined) seqs.push([id, Number(earlier[1])]);
            continue;
          }
          const proposed = operation[2] as number;
          const seq = Number.isSafeInteger(proposed) && proposed > lastSeq ? proposed : lastSeq + 1;
          lastSeq = seq;
          // [id, seq, createdAt, role, name, input, output, caller, predecessor, metadata]
          appended.set(id, [id, seq, Math.trunc(operation[3] as number), operation[4], operation[5], operation[6], operation[7], operation[8], operation[9], operation[10]]);
          seqs.push([id, seq]);
          if (operation[8] === null) headId = id;
          continue;
        }
        const set = operation[7] === null ? {} : (JSON.parse(operation[7] as string) as Record<string, unknown>);
        const remove = (operation[8] as string[] | null) ?? [];
        const fresh = appended.get(id);
        if (fresh !== undefined) {
          // A node appended earlier in this commit: updated before it is written.
          if (operation[2] !== null) fresh[4] = operation[2];
          if (operation[3] === true) fresh[5] = operation[4];
          if (operation[5] === true) fresh[6] = operation[6];
          const metadata = JSON.parse(fresh[9] as string) as Record<string, unknown>;
          for (const key of remove) delete metadata[key];
          Object.assign(metadata, set);
          fresh[9] = JSON.stringify(metadata);
          continue;
        }
        // An update of a node that is not stored is ignored, as by every store.
        if (!stored.has(id)) continue;
        let folded = updates.get(id);
        if (folded === undefined) updates.set(id, (folded = { name: null, hasInput: false, input: null, hasOutput: false, output: null, set: {}, remove: new Set() }));
        if (operation[2] !== null) folded.name = operation[2] as string;
        if (operation[3] === true) {
          folded.hasInput = true;
          folded.input = operation[4];
        }
        if (operation[5] === true) {
          folded.hasOutput = true;
          folded.output = operation[6];
        }
        for (const key of remove) {
          folded.remove.add(key);
          delete folded.set[key];
        }
        for (const key of Object.keys(set)) {
          folded.remove.delete(key);
          folded.set[key] = set[key];
        }
      }
      const rows = [...appended.values()];
      const column = (index: number): unknown[] => rows.map((found) => found[index]);
      const changes = [...updates];
      // One statement writes the nodes, the updates and the session. The
      // parts of one statement see the same snapshot: no update here targets
      // a node appended here (those were folded in above).
      const result = await query(
        c,
        `WITH inserted AS (INSERT INTO ${S}.nodes (session_id, id, seq, created_at, role, name, input, output, caller, predecessor, metadata, owner) ` +
          `SELECT $1, a.id, a.seq, a.created_at, a.role, a.name, a.input, a.output, a.caller, a.predecessor, a.metadata, $12 ` +
          `FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::jsonb[]) ` +
          `AS a(id, seq, created_at, role, name, input, output, caller, predecessor, metadata) RETURNING 1), ` +
          `updated AS (UPDATE ${S}.nodes n SET name = coalesce(u.name, n.name), ` +
          `input = CASE WHEN u.has_input THEN u.input ELSE n.input END, output = CASE WHEN u.has_output THEN u.output ELSE n.output END, ` +
          `metadata = (n.metadata - ARRAY(SELECT jsonb_array_elements_text(u.remove))) || u.set ` +
          `FROM unnest($13::text[], $14::text[], $15::bool[], $16::text[], $17::bool[], $18::text[], $19::jsonb[], $20::jsonb[]) ` +
          `AS u(id, name, has_input, input, has_output, output, set, remove) WHERE n.session_id = $1 AND n.id = ANY($13::text[]) AND n.id = u.id RETURNING 1) ` +
          `UPDATE ${S}.sessions SET head_id = $21, last_seq = $22, node_count = node_count + $23, updated_at = $24 WHERE id = $1`,
        [
          sessionId,
          column(0),
          column(1),
          column(2),
          column(3),
          column(4),
          column(5),
          column(6),
          column(7),
          column(8),
          column(9),
          data.owner,
          changes.map(([id]) => id),
          changes.map(([, change]) => change.name),
          changes.map(([, change]) => change.hasInput),
          changes.map(([, change]) => change.input),
          changes.map(([, change]) => change.hasOutput),
          changes.map(([, change]) => change.output),
          changes.map(([, change]) => JSON.stringify(change.set)),
          changes.map(([, change]) => JSON.stringify([...change.remove])),
          headId,
          lastSeq,
          rows.length,
          Date.now(),
        ],
      );
      if (result.rowCount !== 1) throw db.sessionNotFound(sessionId);
      return seqs;
    });
  }

  return commit;
}
