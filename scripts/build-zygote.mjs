// Builds dist/arbor-zygote from native/ (zygote.c: the wire and the loop; confine.c: a command's
// first process; decision 0103): the resident half of a confined
// workspace's sandbox. Linux only, with the C compiler the machine has (cc, gcc or clang). Where
// none is there the build goes on without it, and every confined command gets a bubblewrap of its
// own, as before residents; the line printed says so.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const sources = ['zygote.c', 'confine.c'].map((f) => path.join(root, 'native', f));
const out = path.join(root, 'dist', 'arbor-zygote');

if (process.platform !== 'linux') {
  console.log(`arbor-zygote: not built (${process.platform}: the OS sandbox is Linux only)`);
  process.exit(0);
}
fs.mkdirSync(path.dirname(out), { recursive: true });
const tmp = `${out}.${process.pid}.tmp`;
for (const cc of [process.env.CC, 'cc', 'gcc', 'clang'].filter(Boolean)) {
  const r = spawnSync(cc, ['-O2', '-Wall', '-Wextra', '-Werror', '-o', tmp, ...sources], { encoding: 'utf8' });
  if (r.error) continue; // not on PATH
  if (r.status !== 0) {
    console.error(`arbor-zygote: ${cc} failed:\n${r.stderr}`);
    process.exit(1);
  }
  fs.renameSync(tmp, out);
  console.log(`built dist/arbor-zygote (${cc})`);
  process.exit(0);
}
console.log('arbor-zygote: not built (no C compiler: cc, gcc or clang); confined commands get a bubblewrap each (decision 0103)');
