/** One server-sent event: its name (`message` when unnamed) and parsed data. */
export interface SentEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/**
 * Reads an SSE response event by event: `next(match)` resolves with the
 * first event (from where the last one left off) that `match` accepts.
 */
export function sseReader(response: Response): { next(match: (event: SentEvent) => boolean): Promise<SentEvent>; close(): Promise<void> } {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const queue: SentEvent[] = [];
  const pull = async (): Promise<boolean> => {
    const { value, done } = await reader.read();
    if (done) return false;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      let data = "";
      for (const line of chunk.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data !== "") queue.push({ event, data: JSON.parse(data) as Record<string, unknown> });
    }
    return true;
  };
  return {
    async next(match) {
      for (;;) {
        const index = queue.findIndex(match);
        if (index >= 0) return queue.splice(0, index + 1)[index]!;
        queue.length = 0;
        if (!(await pull())) throw new Error("the event stream ended before the awaited event");
      }
    },
    close: () => reader.cancel(),
  };
}
