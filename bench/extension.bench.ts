// extension.activate_ms: activate() measured inside the real extension host (code-server),
// by the host test that reads the extension's own measurement. vsix.size_mb: `npm run package`.
// Both need the e2e tools (code-server, Node 24, vsce): installed here when missing, as
// `npm test` does; a figure that still cannot be measured is a MISS with the reason.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureE2ETools } from './e2e-tools';
import { type BenchOptions, type Figure, type FigureSpec, fmt, missed, tempDir } from './support';

export const name = 'extension';

const VSIX: FigureSpec = { id: 'vsix.size_mb', op: '<=', target: 3 };
const ACTIVATE: FigureSpec = { id: 'extension.activate_ms', op: '<=', target: 50 };
export const figures: readonly FigureSpec[] = [VSIX, ACTIVATE];

const root = path.resolve(__dirname, '..', '..');

/** The last non-empty line of a failed child's output, for a one-line reason. */
function lastLine(r: { stdout: string; stderr: string; status: number | null; signal: NodeJS.Signals | null; error?: Error }): string {
  const line = `${r.stderr ?? ''}\n${r.stdout ?? ''}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .reverse()
    .find((l) => /error|fail|missing|cannot|not /i.test(l));
  return `${r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit ${r.status}`}${line ? `: ${line.slice(0, 300)}` : ''}`;
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const install = await ensureE2ETools(opts.note);
  if (install) opts.note(`extension: ${install}`);
  const figures: Figure[] = [];
  const pkg = spawnSync(process.execPath, [path.join(root, 'scripts', 'package.mjs')], { cwd: root, encoding: 'utf8' });
  const version = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const vsix = path.join(root, `arbor-${version}.vsix`);
  if (pkg.status === 0 && fs.existsSync(vsix)) {
    const mb = fs.statSync(vsix).size / 1048576;
    opts.note(`vsix: ${vsix} ${fmt(mb)} MB`);
    figures.push({ ...VSIX, value: mb });
  } else {
    opts.note(`vsix: packaging failed (exit ${pkg.status}): ${(pkg.stderr || pkg.stdout).slice(-400)}`);
    figures.push(missed(VSIX, `npm run package failed (${lastLine(pkg)})${install ? `; ${install}` : ''}`));
  }

  const out = path.join(tempDir('arbor-bench-ext-'), 'activation.json');
  const samples: number[] = [];
  let failure = '';
  for (let i = 0; i < (opts.quick ? 1 : 3); i++) {
    fs.rmSync(out, { force: true });
    const r = spawnSync(process.execPath, [path.join(root, 'test', 'e2e', 'run-host-tests.mjs')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ARBOR_HOST_TEST_GREP: 'activates quickly', ARBOR_ACTIVATION_OUT: out },
    });
    if (r.status === 0 && fs.existsSync(out)) samples.push((JSON.parse(fs.readFileSync(out, 'utf8')) as { activationMs: number }).activationMs);
    else {
      opts.note(`activation run failed (exit ${r.status}): ${(r.stderr || r.stdout).slice(-400)}`);
      failure = r.status === 0 ? `the host test passed but wrote no ${path.basename(out)}` : `the host test run failed (${lastLine(r)})`;
    }
  }
  if (samples.length > 0) {
    samples.sort((a, b) => a - b);
    opts.note(`activate() in the real extension host: ${samples.map(fmt).join(', ')} ms`);
    figures.push({ ...ACTIVATE, value: samples[Math.floor(samples.length / 2)] });
  } else figures.push(missed(ACTIVATE, `${failure}${install ? `; ${install}` : ''}`));
  return figures;
}
