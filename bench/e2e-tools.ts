// The end-to-end tools the webview and extension benches need (Chromium, playwright-core,
// Node 24, code-server, vsce), installed the way `npm test` installs them: when
// `missingTools()` (scripts/e2e/paths.mjs) names anything, `scripts/e2e/setup.mjs` runs.
// Both are ES modules, so they run in a child process rather than being imported here.
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from '../test/support/repo-root';

let ensured: Promise<string | undefined> | undefined;

/** What scripts/e2e/paths.mjs says is missing (empty when ready), or why it could not say. */
export function missingTools(): string[] {
  const paths = path.join(repoRoot(), 'scripts', 'e2e', 'paths.mjs');
  const script = `import(${JSON.stringify(new URL(`file://${paths}`).href)}).then((m) => console.log(JSON.stringify(m.missingTools())))`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) return [`(could not check: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').slice(-1)[0]})`];
  return JSON.parse(r.stdout) as string[];
}

/**
 * Installs the tools when some are missing; once per process (later callers share the
 * result). Resolves undefined when they are all there, else one line saying what is missing
 * and why the install did not fix it. The installer's progress goes to stderr, so stdout keeps
 * only figures and `# ` lines.
 */
export function ensureE2ETools(note: (line: string) => void): Promise<string | undefined> {
  ensured ??= (async () => {
    const before = missingTools();
    if (before.length === 0) return undefined;
    note(`e2e tools missing (${before.join(', ')}): running scripts/e2e/setup.mjs (first time: a few minutes)`);
    const setup = path.join(repoRoot(), 'scripts', 'e2e', 'setup.mjs');
    let tail = '';
    const code = await new Promise<number | string>((resolve) => {
      const child = spawn(process.execPath, [setup], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
      const forward = (b: Buffer) => {
        process.stderr.write(b);
        tail = (tail + b.toString('utf8')).slice(-4000);
      };
      child.stdout.on('data', forward);
      child.stderr.on('data', forward);
      child.on('error', (err) => resolve(`could not start: ${err.message}`));
      child.on('exit', (c, signal) => resolve(c ?? `killed by ${signal}`));
    });
    // setup.mjs ends a failure with "[setup:e2e] FAILED at step …: <why>".
    const failure = tail
      .split('\n')
      .reverse()
      .find((l) => l.includes('FAILED'))
      ?.trim();
    const after = missingTools();
    if (after.length === 0) {
      note('e2e tools installed');
      return undefined;
    }
    return `e2e tools missing after scripts/e2e/setup.mjs (${code === 0 ? 'it succeeded' : (failure ?? `it exited ${code}`)}): ${after.join(', ')}; run npm run setup:e2e and read its output`;
  })();
  return ensured;
}
