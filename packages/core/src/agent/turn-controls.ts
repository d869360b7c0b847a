const NOTHING_STEERED: readonly string[] = Object.freeze([]);

/**
 * What a caller asks of an agent's turns while they run: a pause at the
 * next safe point, and steered input for the next request. A pause asked
 * while turns run is for them (forgotten when the last of them ends, so a
 * turn that finished first never pauses a later one); asked with none
 * running, it is for the next turn. Steered input is taken by a turn's
 * requests only, never by a request made inside one of its tool calls.
 * @internal
 */
export class TurnControls {
  #pause: false | "running" | "next" = false;
  #running = 0;
  readonly #steering: string[] = [];

  /** Asks the running turns (else the next one) to pause. */
  requestPause(): void {
    this.#pause = this.#running > 0 ? "running" : "next";
  }

  /** At a safe point: whether a pause was asked (and then no longer). */
  takePause(): boolean {
    const requested = this.#pause !== false;
    this.#pause = false;
    return requested;
  }

  /** Queues input for a turn's next request. */
  steer(text: string): void {
    this.#steering.push(text);
  }

  /** Takes the queued input for a turn's next request. */
  takeSteering(): readonly string[] {
    return this.#steering.length === 0 ? NOTHING_STEERED : this.#steering.splice(0);
  }

  /** Runs one turn, counted as running while it does. */
  async running<R>(turn: () => Promise<R>): Promise<R> {
    this.#running++;
    try {
      return await turn();
    } finally {
      if (--this.#running === 0 && this.#pause === "running") this.#pause = false;
    }
  }
}
