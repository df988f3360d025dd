import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  CORE_ORDER,
  checkLayers,
  coreRank,
  findImports,
  importCircles,
  importGraph,
  isAcpSource,
  isCoreSource,
  isProtocolSource,
  isWebviewSource,
  type SourceFile,
  type Violation,
  type ViolationKind,
} from './support/layer-check';
import { repoRoot } from './support/repo-root';

function kinds(files: SourceFile[]): ViolationKind[] {
  return checkLayers(files).map((v) => v.kind);
}

describe('layer check (DESIGN §1) on sample sources', () => {
  describe('src/core', () => {
    const core = (text: string): SourceFile => ({ path: 'src/core/agent/agent.ts', text });

    it('rejects importing vscode, in every import form', () => {
      const forms = [
        `import * as vscode from 'vscode';`,
        `import type { Uri } from "vscode";`,
        `export { window } from 'vscode';`,
        `import 'vscode';`,
        `const vscode = require('vscode');`,
        `import vscode = require('vscode');`,
        `const v = await import('vscode');`,
        `import {\n  window,\n  Uri,\n} from 'vscode';`,
      ];
      for (const text of forms) {
        assert.deepEqual(kinds([core(text)]), ['core-imports-vscode'], text);
      }
    });

    it('rejects reaching src/extension, src/cli or webview', () => {
      const forms = [
        `import { ChatViewProvider } from '../../extension/chat-view';`,
        `import { main } from '../../cli/main';`,
        `export * from '../../../webview/src/vscode';`,
        `const cli = require('../../cli');`,
        `import { x } from 'src/extension/x';`,
      ];
      for (const text of forms) {
        assert.deepEqual(kinds([core(text)]), ['core-imports-outer-layer'], text);
      }
    });

    it('allows core, protocol, node builtins and packages', () => {
      const text = [
        `import { Session } from '../session/session';`,
        `import type { HostToWebview } from '../../protocol';`,
        `import * as fs from 'node:fs';`,
        `import initSqlJs from 'sql.js';`,
        `import OpenAI from 'openai';`,
      ].join('\n');
      assert.deepEqual(kinds([core(text)]), []);
    });

    it('is not fooled by comments, strings or regex literals that mention vscode', () => {
      const text = [
        `// import * as vscode from 'vscode';`,
        `/* const v = require('vscode'); */`,
        `const doc = "require('vscode') is forbidden here";`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text the layer check must not take for an import
        'const tpl = `import x from ${"\'vscode\'"}`;',
        `const re = /import '\\.\\.\\/extension'/;`,
        `const ok = 1; // import '../../extension/x'`,
      ].join('\n');
      assert.deepEqual(kinds([core(text)]), []);
    });

    it('rejects a core layer importing one above it, types included', () => {
      const at = (file: string, text: string): SourceFile => ({ path: file, text });
      const cases: SourceFile[] = [
        at('src/core/model/types.ts', `import type { JsonSchema } from '../tools/tool';`),
        at('src/core/session/events.ts', `import { Store } from '../store/store';`),
        at('src/core/agent/agent.ts', `import type { SubagentRuntime } from '../subagent/runtime';`),
        at('src/core/subagent/runtime.ts', `import { Harness } from '../harness';`),
        at('src/core/tools/x.ts', `import { sessionsOf } from '../harness/sessions';`),
        at('src/core/errors.ts', `import type { SessionEvent } from './session/events';`),
        // Peers on one rank stay independent of each other.
        at('src/core/goal/service.ts', `import { WorkflowEngine } from '../workflow/engine';`),
      ];
      for (const file of cases) assert.deepEqual(kinds([file]), ['core-imports-higher-layer'], `${file.path}: ${file.text}`);
    });

    it('allows a core layer to import its own and lower layers', () => {
      const files: SourceFile[] = [
        { path: 'src/core/tools/tool.ts', text: `import type { JsonSchema } from '../model/json-schema';\nimport { describeError } from '../errors';` },
        {
          path: 'src/core/subagent/tools/report-tool.ts',
          text: `import { ok } from '../../tools/result';\nimport type { SubagentRuntime } from '../runtime';`,
        },
        { path: 'src/core/harness.ts', text: `import { Agent } from './agent/agent';\nimport { SessionsService } from './harness/sessions';` },
        { path: 'src/core/harness/sessions.ts', text: `import { Harness } from '../harness';` },
      ];
      assert.deepEqual(checkLayers(files), []);
    });

    it('rejects a core file in a layer the order does not place', () => {
      assert.deepEqual(checkLayers([{ path: 'src/core/misc/util.ts', text: '' }]), [
        { file: 'src/core/misc/util.ts', kind: 'core-layer-unplaced', specifier: 'misc', line: 1 },
      ]);
    });

    it('reports file, specifier and line', () => {
      const violations: Violation[] = checkLayers([core(`import { a } from './a';\n\nimport * as vscode from 'vscode';\n`)]);
      assert.deepEqual(violations, [{ file: 'src/core/agent/agent.ts', kind: 'core-imports-vscode', specifier: 'vscode', line: 3 }]);
    });
  });

  describe('webview/src', () => {
    const ts = (text: string): SourceFile => ({ path: 'webview/src/tree/node.ts', text });
    const svelte = (script: string, markup = ''): SourceFile => ({
      path: 'webview/src/App.svelte',
      text: `<script lang="ts">\n${script}\n</script>\n\n${markup}\n<style>p { color: red; }</style>\n`,
    });

    it('rejects importing core, extension, cli or vscode', () => {
      const cases: SourceFile[] = [
        ts(`import type { SessionEvent } from '../../../src/core/session/events';`),
        ts(`import { ChatViewProvider } from '../../../src/extension/chat-view';`),
        ts(`import { run } from '../../../src/cli/run';`),
        ts(`import * as vscode from 'vscode';`),
        svelte(`import { Session } from '../../src/core/session/session';`),
        ts(`import { x } from 'src/core/x';`),
      ];
      for (const file of cases) {
        assert.deepEqual(kinds([file]), ['webview-imports-host-layer'], file.text);
      }
    });

    it('rejects any other import outside webview/', () => {
      const cases: SourceFile[] = [
        ts(`import pkg from '../../../package.json';`),
        ts(`import { helper } from '../../../src/util/helper';`),
        svelte(`import { x } from '../../scripts/x.mjs';`),
        ts(`import { y } from '../../../../elsewhere/y';`),
      ];
      for (const file of cases) {
        assert.deepEqual(kinds([file]), ['webview-escapes-folder'], file.text);
      }
    });

    it('allows webview files, src/protocol.ts and packages', () => {
      const allowed = [
        svelte(
          [
            `import type { HostToWebview } from '../../src/protocol';`,
            `import type { WebviewToHost } from '../../src/protocol.ts';`,
            `export type { SessionSummary } from '../../src/protocol';`,
            `import { post } from './vscode';`,
            `import Node from './tree/Node.svelte';`,
            `import '@vscode-elements/elements/dist/vscode-badge/index.js';`,
            `import { mount } from 'svelte';`,
          ].join('\n'),
          // Markup text is not script: neither the apostrophe nor the "import" counts.
          `<p>Don't import '../../src/core/x' from the markup.</p>`,
        ),
        ts(`import { post } from '../vscode';\nimport '../../styles/base.css';`),
      ];
      assert.deepEqual(kinds(allowed), []);
    });

    it('allows values of src/protocol.ts too (a leaf: nothing of the host comes with them)', () => {
      const cases: SourceFile[] = [
        ts(`import { isCompactable } from '../../../src/protocol';`),
        ts(`import { type HostToWebview, COMMAND_IDS } from '../../../src/protocol';`),
        svelte(`import * as protocol from '../../src/protocol.ts';`),
      ];
      assert.deepEqual(kinds(cases), []);
    });
  });

  describe('src/protocol.ts and src/protocol/', () => {
    it('import nothing from outside src/protocol/, not even a type', () => {
      const cases = [`import type { Harness } from './core/harness';`, `export { x } from './y';`, `import 'node:fs';`, `import { z } from 'zod';`];
      for (const text of cases) assert.deepEqual(kinds([{ path: 'src/protocol.ts', text }]), ['protocol-imports'], text);
      const inner = [`import type { Harness } from '../core/harness';`, `import type { X } from '../extension/x';`, `import 'node:path';`];
      for (const text of inner) assert.deepEqual(kinds([{ path: 'src/protocol/tree.ts', text }]), ['protocol-imports'], text);
      assert.deepEqual(kinds([{ path: 'src/protocol.ts', text: `export const COMMAND_IDS = ['arbor.fork'] as const;` }]), []);
    });

    it('may import each other (src/protocol.ts re-exports its folder)', () => {
      assert.deepEqual(kinds([{ path: 'src/protocol.ts', text: `import type { TreeNode } from './protocol/tree';\nexport * from './protocol/views';` }]), []);
      assert.deepEqual(kinds([{ path: 'src/protocol/views.ts', text: `import type { StopReason } from './tree';` }]), []);
      assert.deepEqual(kinds([{ path: 'src/protocol/commands.ts', text: `import type { WebviewToHost } from '../protocol';` }]), []);
    });

    it('the webview still imports only src/protocol.ts, not the files behind it', () => {
      const text = `import type { TreeNode } from '../../../src/protocol/tree';`;
      assert.deepEqual(kinds([{ path: 'webview/src/lib/x.ts', text }]), ['webview-escapes-folder']);
    });
  });

  describe('src/acp', () => {
    const acpFile = (text: string): SourceFile => ({ path: 'src/acp/server.ts', text });

    it('rejects vscode, src/extension, src/cli and webview', () => {
      const forms = [
        `import * as vscode from 'vscode';`,
        `import { main } from '../cli/main';`,
        `import { x } from '../extension/host';`,
        `import type { A } from '../../webview/src/a';`,
      ];
      for (const text of forms) assert.deepEqual(kinds([acpFile(text)]), ['acp-imports-outer-layer'], text);
    });

    it('allows core, its own files, node builtins and packages', () => {
      const text = [
        `import { Harness } from '../core/harness';`,
        `import { Feed } from './feed';`,
        `import * as path from 'node:path';`,
        `import * as acp from '@agentclientprotocol/sdk/unstable';`,
      ].join('\n');
      assert.deepEqual(kinds([acpFile(text)]), []);
    });
  });

  it('ignores files outside src/core, src/acp and webview/src', () => {
    const files: SourceFile[] = [
      { path: 'src/extension/extension.ts', text: `import * as vscode from 'vscode';` },
      { path: 'src/cli/main.ts', text: `import { Harness } from '../core/harness';` },
      { path: 'webview/vite-helper.ts', text: `import { x } from '../src/core/x';` },
    ];
    assert.deepEqual(checkLayers(files), []);
  });

  it('finds imports in multi-line and mixed sources', () => {
    const text = [`import {`, `  a,`, `  b,`, `} from './ab';`, `export * as c from "./c";`, `const d = import('./d');`, `import.meta.url;`].join('\n');
    assert.deepEqual(findImports(text), [
      { specifier: './ab', line: 4, typeOnly: false },
      { specifier: './c', line: 5, typeOnly: false },
      { specifier: './d', line: 6, typeOnly: false },
    ]);
    assert.deepEqual(findImports(`import type {\n  A,\n} from './a';\nexport type * from './b';`), [
      { specifier: './a', line: 3, typeOnly: true },
      { specifier: './b', line: 4, typeOnly: true },
    ]);
  });
});

describe('import circles (strongly connected components) on sample sources', () => {
  const f = (p: string, ...imports: string[]): SourceFile => ({ path: p, text: imports.join('\n') });

  it('finds a circle of two files tied only by type imports', () => {
    const files = [f('src/cli/acp.ts', `import type { Command } from './commands';`), f('src/cli/commands.ts', `import { acpCommand } from './acp';`)];
    assert.deepEqual(importCircles(files), [['src/cli/acp.ts', 'src/cli/commands.ts']]);
  });

  it('finds a longer circle through every import form, and leaves the files outside it out', () => {
    const files = [
      f('src/core/agent/config.ts', `import type { TurnOutcome } from './turn';`),
      f('src/core/agent/turn.ts', `import { budgetedRequest } from './request-budget';`, `import { runToolCalls } from './tool-runner';`),
      f('src/core/agent/request-budget.ts', `type X = import('./config').AgentConfig;`),
      f('src/core/agent/tool-runner.ts', `export type { ToolCallHooks } from './config';`),
      f('src/core/agent/agent.ts', `import { runTurn } from './turn';`),
      f('src/core/errors.ts'),
    ];
    assert.deepEqual(importCircles(files), [
      ['src/core/agent/config.ts', 'src/core/agent/request-budget.ts', 'src/core/agent/tool-runner.ts', 'src/core/agent/turn.ts'],
    ]);
  });

  it('finds separate circles separately, and a file that imports itself', () => {
    const files = [
      f('src/a.ts', `import './b';`),
      f('src/b.ts', `import './a';`),
      f('src/c/index.ts', `import { d } from '../d.js';`),
      f('src/d.ts', `import { c } from './c';`),
      f('src/e.ts', `import { e } from './e';`),
    ];
    assert.deepEqual(importCircles(files), [['src/a.ts', 'src/b.ts'], ['src/c/index.ts', 'src/d.ts'], ['src/e.ts']]);
  });

  it('finds none in a graph without a cycle (a diamond, packages, comments and strings)', () => {
    const files = [
      f('src/top.ts', `import { l } from './left';`, `import { r } from './right';`, `import * as fs from 'node:fs';`),
      f('src/left.ts', `import { b } from './bottom';`, `// import { t } from './top';`),
      f('src/right.ts', `import { b } from './bottom';`, `const s = "import { t } from './top'";`),
      f('src/bottom.ts', `import OpenAI from 'openai';`),
    ];
    assert.deepEqual(importCircles(files), []);
    assert.deepEqual(importGraph(files).get('src/top.ts'), ['src/left.ts', 'src/right.ts']);
    assert.deepEqual(importGraph(files).get('src/left.ts'), ['src/bottom.ts']);
  });

  it('follows a chain longer than a call stack would hold', () => {
    const n = 20_000;
    const files = Array.from({ length: n }, (_, i) => f(`src/m${i}.ts`, `import './m${(i + 1) % n}';`));
    const circles = importCircles(files);
    assert.equal(circles.length, 1);
    assert.equal(circles[0]!.length, n);
  });
});

// ── the real tree ─────────────────────────────────────────────────────────────

function readTree(root: string, folder: string, covered: (rel: string) => boolean): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(abs);
        continue;
      }
      const rel = path.relative(root, abs).split(path.sep).join('/');
      if (entry.isFile() && covered(rel)) files.push({ path: rel, text: fs.readFileSync(abs, 'utf8') });
    }
  };
  const start = path.join(root, folder);
  if (fs.existsSync(start)) walk(start);
  return files;
}

function format(violations: Violation[]): string {
  return violations.map((v) => `${v.file}:${v.line}  ${v.kind}  '${v.specifier}'`).join('\n');
}

describe('layer rule on the real tree', () => {
  const root = repoRoot();

  it('src/core imports nothing from vscode, src/extension, src/cli or webview, and each layer only lower ones', () => {
    assert.ok(fs.statSync(path.join(root, 'src/core')).isDirectory(), 'src/core exists');
    const files = readTree(root, 'src/core', isCoreSource);
    // Every layer of the order is there: a renamed folder must be renamed in CORE_ORDER too.
    const layers = new Set(files.map((f) => coreRank(f.path)?.layer));
    for (const layer of CORE_ORDER.flat()) assert.ok(layers.has(layer), `src/core has layer ${layer}`);
    const violations = checkLayers(files);
    assert.equal(violations.length, 0, `layer violations:\n${format(violations)}`);
  });

  it('src/protocol.ts and src/protocol/ import nothing from outside the contract', () => {
    const files = readTree(root, 'src', isProtocolSource);
    assert.ok(files.some((f) => f.path === 'src/protocol.ts') && files.length > 1, 'src/protocol.ts and its folder were scanned');
    const violations = checkLayers(files);
    assert.equal(violations.length, 0, `layer violations:\n${format(violations)}`);
  });

  it('no test imports from bench/ (the bench tests its own machinery: bench/selftest.test.ts)', () => {
    const files = readTree(root, 'test', (rel) => /\.(ts|mjs|js)$/.test(rel));
    assert.ok(files.length > 50, 'the tests were scanned');
    const bad = files.flatMap((f) =>
      findImports(f.text)
        .filter((ref) => ref.specifier.startsWith('.') && path.posix.normalize(path.posix.join(path.posix.dirname(f.path), ref.specifier)).startsWith('bench/'))
        .map((ref) => `${f.path}:${ref.line} '${ref.specifier}'`),
    );
    assert.deepEqual(bad, []);
  });

  it('no import circle among src/ modules (type imports included)', () => {
    const files = readTree(root, 'src', (rel) => /\.(ts|mts|cts)$/.test(rel));
    assert.ok(
      files.some((file) => file.path === 'src/core/harness.ts') && files.some((file) => file.path === 'src/extension/extension.ts'),
      'src/ was scanned',
    );
    const circles = importCircles(files);
    assert.deepEqual(circles, [], `import circles:\n${circles.map((c) => c.join(' → ')).join('\n')}`);
  });

  it('src/acp imports nothing from vscode, src/extension, src/cli or webview', () => {
    assert.ok(fs.statSync(path.join(root, 'src/acp')).isDirectory(), 'src/acp exists');
    const violations = checkLayers(readTree(root, 'src/acp', isAcpSource));
    assert.equal(violations.length, 0, `layer violations:\n${format(violations)}`);
  });

  it('webview/src imports only webview files, src/protocol.ts and packages', () => {
    const files = readTree(root, 'webview/src', isWebviewSource);
    // An empty scan would pass vacuously; the webview entry point must be among the files.
    assert.ok(
      files.some((f) => f.path === 'webview/src/main.ts'),
      'webview/src/main.ts was scanned',
    );
    const violations = checkLayers(files);
    assert.equal(violations.length, 0, `layer violations:\n${format(violations)}`);
  });
});
