// Bundles the CLI (decision 0068) as two CommonJS files, the way the extension host is bundled:
// - dist/cli.js, the launcher bin/arbor.js loads: argument parsing, `--version`, `--help`.
//   Nothing else, so `arbor --version` costs about a bare Node start.
// - dist/cli-commands.js, required by the launcher once a command is named: every command,
//   core, sql.js, openai, the MCP and ACP SDKs. Its handler map imports each command's module
//   on use, and esbuild keeps such modules (and what only they import) uninitialised until then.
// Beside them: dist/workflow-child.js (forked for workflow scripts) and dist/sql-wasm.wasm.
// Also `import { buildCli } from './build-cli.mjs'` (the tests rebuild a stale bundle).

import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildBesides, common } from './bundle-common.mjs';

/** main.ts's `import('./commands')` is the other bundle, required at run time. */
const commandsBesideLauncher = {
  name: 'cli-commands-external',
  setup(b) {
    b.onResolve({ filter: /^\.\/commands$/ }, (args) =>
      args.importer.endsWith('src/cli/main.ts') ? { path: './cli-commands.js', external: true } : undefined,
    );
  },
};

export async function buildCli() {
  // `import()` of a file outside the bundle stays an ESM import unless lowered: Node would then
  // load the 2 MB commands bundle through its ESM loader, lexing it for named exports (~0.2 s).
  await build({
    ...common,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    sourcemap: false,
    supported: { 'dynamic-import': false },
    plugins: [commandsBesideLauncher],
  });
  // Whitespace and syntax minified (names kept: errors and logs read the same): ~20% less for
  // V8 to parse on every command, the largest single cost of a short one.
  await build({ ...common, entryPoints: ['src/cli/commands.ts'], outfile: 'dist/cli-commands.js', minifyWhitespace: true, minifySyntax: true });
  await buildBesides();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildCli();
  console.log('built dist/cli.js, dist/cli-commands.js, dist/workflow-child.js, dist/spawner-child.js, dist/sql-wasm.wasm');
}
