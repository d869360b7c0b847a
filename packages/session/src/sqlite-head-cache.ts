import { closeSync, openSync, readSync } from "node:fs";

/**
 * The session heads a SQLite `SessionStore` read or committed, each
 * with the WAL stamp it is current for. The stamp is the WAL-index header,
 * the first 48 bytes of the `-shm` file, which every commit of any
 * connection rewrites (see `walStamp` in `sqlite-worker-database.ts`): while
 * the file still holds the stamp a head was remembered with, nothing was
 * committed since and the head is still the session's head. Checking costs
 * one small file read instead of a round trip to the database.
 * @internal
 */
export class SqliteHeadCache {
  /** Heads, with the WAL stamp they are current for. */
  private readonly heads = new Map<string, { head: string | null; stamp: string }>();
  /** The `-shm` file, read for stamps: opened on first use; null when there is none. */
  private shm: number | null | undefined;
  private readonly header = Buffer.alloc(48);

  /** @param location the database file, or `":memory:"` (which has no stamps). */
  constructor(private readonly location: string) {}

  /** The remembered head of the session when nothing was committed since; undefined when it must be read. */
  current(sessionId: string): string | null | undefined {
    const known = this.heads.get(sessionId);
    if (known !== undefined && known.stamp === this.walStamp()) return known.head;
    return undefined;
  }

  /** Remembers a head read or committed at `stamp`; a null stamp (unknown) forgets the session's head. */
  remember(sessionId: string, head: string | null, stamp: string | null): void {
    if (stamp === null) this.heads.delete(sessionId);
    else this.heads.set(sessionId, { head: head === null ? null : String(head), stamp });
  }

  /** Forgets every head and closes the `-shm` file for good. */
  close(): void {
    this.heads.clear();
    if (typeof this.shm === "number") closeSync(this.shm);
    this.shm = null;
  }

  /** The WAL-index header as the worker reports it (see `walStamp` there), or null. */
  private walStamp(): string | null {
    if (this.shm === undefined) {
      this.shm = null;
      if (this.location !== ":memory:") {
        try {
          this.shm = openSync(`${this.location}-shm`, "r");
        } catch {
          /* no stamps: heads are read from the database */
        }
      }
    }
    if (this.shm === null) return null;
    try {
      if (readSync(this.shm, this.header, 0, 48, 0) !== 48) return null;
    } catch {
      return null;
    }
    return this.header.toString("latin1");
  }
}
