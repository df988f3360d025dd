import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The package's own version, read when asked (the CLI's `--version`, `arbor acp`'s agentInfo, and
 * the version a placement's `arbor` must have). Arbor runs from two layouts: an esbuild bundle in
 * dist/ (the package root is one folder up) and the compiled tree in out/src/<layer> (three up);
 * the first package.json named `arbor` wins.
 */
export function arborVersion(): string {
  for (const up of [['..'], ['..', '..', '..']]) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, ...up, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'arbor') return pkg.version ?? 'unknown';
    } catch {
      // not this layout
    }
  }
  return 'unknown';
}
