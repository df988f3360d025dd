import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arborBin } from './cli-bundle';
import { repoRoot } from './repo-root';

// A container image for the container placement's tests, built here with no registry: `podman
// import` of a tarball holding this machine's node and POSIX shell (with the shared libraries
// `ldd` names), `mkdir`, and this repository's CLI bundle under /opt/arbor, run as
// `/opt/arbor/bin/arbor`. Tagged by a hash of what went in, so an unchanged bundle is not built again.

export const ENGINE = 'podman';

/**
 * What `podman run` needs on this machine (decision 0071): runc, because crun refuses the
 * hybrid cgroup v1/v2 layout here; rlimits below the hard limits the runtime may not raise;
 * the host network, so the inner arbor reaches a model server on 127.0.0.1.
 */
export const RUN_ARGS = ['--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024', '--network=host'];

/** Why a container cannot run here, or undefined when podman and runc are installed. */
export function engineMissing(): string | undefined {
  for (const [cmd, pkg] of [
    [ENGINE, 'podman'],
    ['runc', 'runc'],
  ] as const)
    if (spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status !== 0) return `${cmd} is not installed (Debian package ${pkg}; run npm run setup:e2e)`;
  return undefined;
}

const BINARIES = ['/usr/bin/node', '/bin/sh', '/bin/mkdir'];
const REPOSITORY = 'localhost/arbor-placement-test';

function libsOf(bin: string): string[] {
  const out = execFileSync('ldd', [bin], { encoding: 'utf8' });
  return [...out.matchAll(/(\/[^\s]+\.so[^\s]*)/g)].map((m) => m[1]!);
}

/** The image's tag (built when missing). */
export function arborImage(): string {
  arborBin(); // the bundle, fresh
  const root = repoRoot();
  const dist = ['cli.js', 'cli-commands.js', 'workflow-child.js', 'spawner-child.js', 'sql-wasm.wasm'].map((f) => path.join(root, 'dist', f));
  const inputs = [...dist, path.join(root, 'bin', 'arbor.js'), path.join(root, 'package.json'), ...BINARIES.map((b) => fs.realpathSync(b))];
  const hash = createHash('sha256');
  for (const f of inputs) hash.update(f).update(fs.readFileSync(f));
  const tag = `${REPOSITORY}:${hash.digest('hex').slice(0, 16)}`;
  if (spawnSync(ENGINE, ['image', 'exists', tag]).status === 0) return tag;

  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-image-'));
  try {
    const put = (src: string, dest = src) => {
      const to = path.join(stage, dest);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(fs.realpathSync(src), to);
      fs.chmodSync(to, fs.statSync(src).mode);
    };
    for (const b of BINARIES) {
      put(b);
      for (const lib of libsOf(b)) if (!fs.existsSync(path.join(stage, lib))) put(lib);
    }
    for (const f of dist) put(f, path.join('/opt/arbor/dist', path.basename(f)));
    put(path.join(root, 'bin', 'arbor.js'), '/opt/arbor/bin/arbor.js');
    put(path.join(root, 'package.json'), '/opt/arbor/package.json');
    fs.writeFileSync(path.join(stage, 'opt/arbor/bin/arbor'), '#!/bin/sh\nexec /usr/bin/node /opt/arbor/bin/arbor.js "$@"\n', { mode: 0o755 });
    for (const d of ['tmp', 'root', 'proc', 'sys', 'dev', 'etc']) fs.mkdirSync(path.join(stage, d), { recursive: true });
    fs.chmodSync(path.join(stage, 'tmp'), 0o1777);
    fs.writeFileSync(path.join(stage, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    const tar = spawnSync('sh', ['-c', `tar -C "$1" -cf - . | ${ENGINE} import --change 'ENV PATH=/opt/arbor/bin:/usr/bin:/bin' - "$2"`, 'sh', stage, tag], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (tar.status !== 0) throw new Error(`building ${tag} failed: ${tar.stderr}`);
    // Images of earlier bundles are of no further use: remove them (best effort).
    const old = spawnSync(ENGINE, ['images', '--format', '{{.Repository}}:{{.Tag}}', REPOSITORY], { encoding: 'utf8' }).stdout ?? '';
    for (const t of old.split('\n').filter((x) => x && x !== tag)) spawnSync(ENGINE, ['rmi', t], { stdio: 'ignore' });
    return tag;
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}
