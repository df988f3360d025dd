// The user's settings.json is JSONC (comments, trailing commas), and it is the user's: `npm
// start` and the test launcher write only the keys they set, with jsonc-parser's edits, so
// every other key and comment stays (VS Code's own settings editor edits the same way, and the
// same library may re-indent the value next to an edit). A file that does not
// parse even as JSONC is left untouched, and the caller says so.
import { applyEdits, modify, parse, printParseErrorCode } from 'jsonc-parser';

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

/**
 * `text` with each of `settings` set (top-level keys, as VS Code writes them), or why it was
 * left alone. An empty or missing file starts as `{}`.
 * @param {string | undefined} text
 * @param {Record<string, unknown>} settings
 * @returns {{ ok: true, text: string } | { ok: false, why: string }}
 */
export function mergeSettingsText(text, settings) {
  let out = text === undefined || text.trim() === '' ? '{}\n' : text;
  const errors = [];
  const value = parse(out, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0];
    const line = out.slice(0, e.offset).split('\n').length;
    return { ok: false, why: `${printParseErrorCode(e.error)} at line ${line}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, why: 'it is not a JSON object' };
  for (const [key, v] of Object.entries(settings)) out = applyEdits(out, modify(out, [key], v, FORMAT));
  return { ok: true, text: out.endsWith('\n') ? out : `${out}\n` };
}
