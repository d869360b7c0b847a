const NOTHING_STEERED: readonly string[] = Object.freeze([]);

/** One running turn, as {@link TurnControls} knows it. @internal */
export type TurnMark = { readonly turn: number };

/**
 * What a caller asks of an agent's turns while they run: a pause at the
 * next safe point, and steered input for the next request. A pause asked
 * while turns run is for each of them (a turn that ends without reaching a
 * safe point forgets it); asked with none running, it is for the next turn
 * to start (and forgotten when that turn ends). Steered input is taken by
 * a turn's requests only, never by a request made inside one of its tool
 * calls.
 * @internal
 */
export class TurnControls {
  readonly #running = new Set<TurnMark>();
  readonly #pausing = new Set<TurnMark>();
  #next = false;
  #count = 0;
  readonly #steering: string[] = [];

  /** Asks the running turns (else the next one) to pause. */
  requestPause(): void {
    if (this.#running.size === 0) this.#next = true;
    for (const mark of this.#running) this.#pausing.add(mark);
  }

  /** At a safe point of turn `mark`: whether a pause was asked of it (and then no longer). */
  takePause(mark: TurnMark): boolean {
    return this.#pausing.delete(mark);
  }

  /** Queues input for a turn's next request. */
  steer(text: string): void {
    this.#steering.push(text);
  }

  /** Takes the queued input for a turn's next request. */
  takeSteering(): readonly string[] {
    return this.#steering.length === 0 ? NOTHING_STEERED : this.#steering.splice(0);
  }

  /** Runs one turn, counted as running while it does; a pause asked before it started is its own. */
  async running<R>(turn: (mark: TurnMark) => Promise<R>): Promise<R> {
    const mark: TurnMark = { turn: ++this.#count };
    this.#running.add(mark);
    if (this.#next) {
      this.#next = false;
      this.#pausing.add(mark);
    }
    try {
      return await turn(mark);
    } finally {
      this.#running.delete(mark);
      this.#pausing.delete(mark);
    }
  }
}
