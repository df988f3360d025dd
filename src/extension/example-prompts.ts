import type { ExamplePrompt } from '../protocol';

/**
 * `arbor.chat.examplePrompts`: a string is a prompt; `{ "prompt", "goalRounds" }` a goal button
 * (a new conversation with that goal, 1-1000 rounds). Anything else is left out; at most 8.
 */
export function readExamplePrompts(v: unknown): ExamplePrompt[] {
  const out: ExamplePrompt[] = [];
  for (const p of Array.isArray(v) ? v : []) {
    if (typeof p === 'string' && p.trim() !== '') out.push({ text: p });
    else if (typeof p === 'object' && p !== null && typeof p.prompt === 'string' && p.prompt.trim() !== '') {
      const rounds = p.goalRounds;
      if (rounds === undefined) out.push({ text: p.prompt });
      else if (Number.isInteger(rounds) && rounds >= 1 && rounds <= 1000) out.push({ text: p.prompt, goalRounds: rounds });
    }
  }
  return out.slice(0, 8);
}
