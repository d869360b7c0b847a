/**
 * 128 random bits from `draw` as unpadded base64url, drawn again while the
 * text would begin with `-`: a command line reads such an argument as an
 * option (`rein runs resume <module> -Fs…` was "unknown option"), and node
 * ids, which are run ids, begin with this text. Costs under 0.03 of the 128
 * bits.
 * @example
 * ```ts
 * randomIdText(randomBytes); // e.g. "FsDZM1XQLtpWW4BReRbmAw"
 * ```
 */
export function randomIdText(draw: (size: number) => Buffer): string {
  for (;;) {
    const text = draw(16).toString("base64url");
    if (!text.startsWith("-")) return text;
  }
}
