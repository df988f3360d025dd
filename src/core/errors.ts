/**
 * The lowest core module (below session in the layer order): every layer may import it.
 * An unknown thrown value as a sentence: an Error's message, anything else as a string.
 */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
