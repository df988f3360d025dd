// The body of an extension-host test entry (test/host/index.ts, test/host-vsix/index.ts): VS Code
// (here code-server, see scripts/e2e/) loads the entry inside the extension host and awaits its
// run(), which runs mocha over every *.test.js under the entry's folder. These tests need the
// `vscode` module, so the plain-Node `mocha` run (.mocharc.json) ignores those folders.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import type { ArborApi } from '../../src/extension/extension';

function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(full);
      return entry.isFile() && entry.name.endsWith('.test.js') ? [full] : [];
    })
    .sort();
}

/** Runs every `*.test.js` under `dir` in this extension host (ARBOR_HOST_TEST_GREP narrows them); rejects when one fails. */
export function runHostMocha(dir: string): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false });
  // Every file shares one extension host, so it is disposed (its harness closed) once, last.
  mocha.rootHooks({
    afterAll: async () => {
      // A grep run may not have activated it (then there is nothing to close).
      const ext = vscode.extensions.getExtension<ArborApi>('arbor-dev.arbor');
      if (ext?.isActive) await (await ext.exports.host()).dispose();
    },
  });
  const grep = process.env.ARBOR_HOST_TEST_GREP;
  if (grep) mocha.grep(grep);
  for (const file of testFiles(dir)) mocha.addFile(file);
  return new Promise((resolve, reject) => {
    mocha.run((failures) => {
      if (failures > 0) reject(new Error(`${failures} extension-host test(s) failed`));
      else resolve();
    });
  });
}
