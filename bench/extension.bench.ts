// extension.activate_ms: activate() measured inside the real extension host (code-server),
// by the host test that reads the extension's own measurement. vsix.size_mb: `npm run package`.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type BenchOptions, type Figure, fmt, tempDir } from './support';

export const name = 'extension';

const root = path.resolve(__dirname, '..', '..');

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const figures: Figure[] = [];
  const pkg = spawnSync(process.execPath, [path.join(root, 'scripts', 'package.mjs')], { cwd: root, encoding: 'utf8' });
  const version = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const vsix = path.join(root, `arbor-${version}.vsix`);
  if (pkg.status === 0 && fs.existsSync(vsix)) {
    const mb = fs.statSync(vsix).size / 1048576;
    opts.note(`vsix: ${vsix} ${fmt(mb)} MB`);
    figures.push({ id: 'vsix.size_mb', value: mb, op: '<=', target: 3 });
  } else opts.note(`vsix: packaging failed (exit ${pkg.status}): ${(pkg.stderr || pkg.stdout).slice(-400)}`);

  const out = path.join(tempDir('arbor-bench-ext-'), 'activation.json');
  const samples: number[] = [];
  for (let i = 0; i < (opts.quick ? 1 : 3); i++) {
    fs.rmSync(out, { force: true });
    const r = spawnSync(process.execPath, [path.join(root, 'test', 'e2e', 'run-host-tests.mjs')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ARBOR_HOST_TEST_GREP: 'activates quickly', ARBOR_ACTIVATION_OUT: out },
    });
    if (r.status === 0 && fs.existsSync(out)) samples.push((JSON.parse(fs.readFileSync(out, 'utf8')) as { activationMs: number }).activationMs);
    else opts.note(`activation run failed (exit ${r.status}): ${(r.stderr || r.stdout).slice(-400)}`);
  }
  if (samples.length > 0) {
    samples.sort((a, b) => a - b);
    opts.note(`activate() in the real extension host: ${samples.map(fmt).join(', ')} ms`);
    figures.push({ id: 'extension.activate_ms', value: samples[Math.floor(samples.length / 2)], op: '<=', target: 50 });
  }
  return figures;
}
