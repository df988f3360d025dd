// The layer rule of DESIGN §1 as a pure function over source text, so the rule itself
// can be tested on in-memory samples before it is trusted on the real tree.
import * as path from 'node:path';

export type ViolationKind =
  /** src/core imports the VS Code API. */
  | 'core-imports-vscode'
  /** src/core reaches into src/extension, src/cli or webview. */
  | 'core-imports-outer-layer'
  /** A src/core layer imports one above it, or a peer on its own rank (see CORE_ORDER). */
  | 'core-imports-higher-layer'
  /** A src/core file sits in a layer CORE_ORDER does not place. */
  | 'core-layer-unplaced'
  /** webview/src imports src/core, src/extension, src/cli or `vscode`. */
  | 'webview-imports-host-layer'
  /** webview/src reaches outside webview/ for anything but src/protocol.ts. */
  | 'webview-escapes-folder'
  /** src/protocol.ts or a file of src/protocol/ imports anything outside src/protocol/. */
  | 'protocol-imports'
  /** src/acp (the ACP agent face, a host like src/cli) imports the VS Code API, src/extension, src/cli or webview. */
  | 'acp-imports-outer-layer';

export interface SourceFile {
  /** Repository-relative path with `/` separators, e.g. `src/core/session/log.ts`. */
  path: string;
  text: string;
}

export interface ImportRef {
  specifier: string;
  line: number;
  /** `import type … from` / `export type … from`: erased at compile time. */
  typeOnly: boolean;
}

export interface Violation {
  file: string;
  kind: ViolationKind;
  specifier: string;
  line: number;
}

const posix = path.posix;

/**
 * The order inside src/core, lowest first: a layer imports only layers on earlier ranks
 * (types too: a type import ties the layers as much as a value import). A layer is the
 * first path segment under src/core (a folder, or a file at the root without its
 * extension). Layers on one rank are peers that stay independent of each other.
 */
export const CORE_ORDER: readonly (readonly string[])[] = [
  ['errors', 'version'],
  ['process'],
  ['session'],
  ['store'],
  ['model', 'cost'],
  ['policy'],
  ['tools'],
  ['scope'],
  ['project'],
  ['agent'],
  ['worktree'],
  ['live'],
  ['subagent'],
  ['feature'],
  ['workflow', 'goal', 'remote', 'hooks', 'mcp', 'checkpoint'],
  ['placement'],
  ['recovery', 'recovered-work'],
  ['harness'],
];

/** The rank of a src/core path in CORE_ORDER (undefined: not placed, or not in src/core). */
export function coreRank(file: string): { layer: string; rank: number | undefined } | undefined {
  if (!within(file, 'src/core') || file === 'src/core') return undefined;
  const layer = file
    .slice('src/core/'.length)
    .split('/')[0]!
    .replace(/\.(ts|mts|cts|js)$/, '');
  const rank = CORE_ORDER.findIndex((r) => r.includes(layer));
  return { layer, rank: rank < 0 ? undefined : rank };
}

/** True for `webview/src/...` sources the rule covers (TypeScript, JavaScript, Svelte). */
export function isWebviewSource(file: string): boolean {
  return file.startsWith('webview/src/') && /\.(ts|js|mjs|svelte)$/.test(file);
}

/** True for `src/core/...` TypeScript sources the rule covers. */
export function isCoreSource(file: string): boolean {
  return file.startsWith('src/core/') && /\.(ts|mts|cts)$/.test(file);
}

/** True for the wire contract: src/protocol.ts and the files of src/protocol/ it re-exports. */
export function isProtocolSource(file: string): boolean {
  return file === 'src/protocol.ts' || (file.startsWith('src/protocol/') && /\.(ts|mts|cts)$/.test(file));
}

/** Whether a protocol file's import stays inside the contract (src/protocol/…, or src/protocol.ts itself). */
function withinProtocol(file: string, specifier: string): boolean {
  const target = resolveInRepo(file, specifier);
  if (target === undefined) return false;
  const bare = target.replace(/\.(ts|js)$/, '');
  return bare === 'src/protocol' || bare.startsWith('src/protocol/');
}

/** True for `src/acp/...` TypeScript sources: a host over core, like src/cli (it may import core, nothing outer). */
export function isAcpSource(file: string): boolean {
  return file.startsWith('src/acp/') && /\.(ts|mts|cts)$/.test(file);
}

/** Checks every covered file; files outside src/core, src/acp, the protocol and webview/src are ignored. */
export function checkLayers(files: readonly SourceFile[]): Violation[] {
  const violations: Violation[] = [];
  for (const file of files) {
    if (isProtocolSource(file.path)) {
      for (const ref of findImports(file.text))
        if (!withinProtocol(file.path, ref.specifier)) violations.push({ file: file.path, kind: 'protocol-imports', specifier: ref.specifier, line: ref.line });
      continue;
    }
    const core = isCoreSource(file.path);
    const acp = isAcpSource(file.path);
    const webview = isWebviewSource(file.path);
    if (!core && !acp && !webview) continue;
    const own = core ? coreRank(file.path) : undefined;
    if (own && own.rank === undefined) violations.push({ file: file.path, kind: 'core-layer-unplaced', specifier: own.layer, line: 1 });
    for (const ref of findImports(file.text, file.path.endsWith('.svelte'))) {
      const kind = core
        ? classifyCoreImport(file.path, ref.specifier)
        : acp
          ? classifyAcpImport(file.path, ref.specifier)
          : classifyWebviewImport(file.path, ref);
      if (kind) violations.push({ file: file.path, kind, specifier: ref.specifier, line: ref.line });
    }
  }
  return violations;
}

function classifyCoreImport(file: string, specifier: string): ViolationKind | undefined {
  if (isVscode(specifier)) return 'core-imports-vscode';
  const target = resolveInRepo(file, specifier);
  if (target && (within(target, 'src/extension') || within(target, 'src/cli') || within(target, 'webview'))) {
    return 'core-imports-outer-layer';
  }
  const from = coreRank(file);
  const to = target === undefined ? undefined : coreRank(target);
  if (from?.rank !== undefined && to?.rank !== undefined && from.layer !== to.layer && to.rank >= from.rank) return 'core-imports-higher-layer';
  return undefined;
}

function classifyAcpImport(file: string, specifier: string): ViolationKind | undefined {
  if (isVscode(specifier)) return 'acp-imports-outer-layer';
  const target = resolveInRepo(file, specifier);
  if (target && (within(target, 'src/extension') || within(target, 'src/cli') || within(target, 'webview'))) return 'acp-imports-outer-layer';
  return undefined;
}

function classifyWebviewImport(file: string, { specifier }: ImportRef): ViolationKind | undefined {
  if (isVscode(specifier)) return 'webview-imports-host-layer';
  const target = resolveInRepo(file, specifier);
  if (target === undefined) return undefined; // a package: svelte, @vscode-elements/…
  if (within(target, 'src/core') || within(target, 'src/extension') || within(target, 'src/cli')) {
    return 'webview-imports-host-layer';
  }
  if (within(target, 'webview')) return undefined;
  if (target.replace(/\.(ts|js)$/, '') === 'src/protocol') return undefined;
  return 'webview-escapes-folder';
}

function isVscode(specifier: string): boolean {
  return specifier === 'vscode' || specifier.startsWith('vscode/');
}

/**
 * The repository path an import points at, or undefined for a package. Relative
 * specifiers resolve against the importing file; a bare `src/…` or `webview/…` is
 * taken as repository-rooted (what a `baseUrl`/`paths` alias would make it).
 */
function resolveInRepo(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..') {
    return posix.normalize(posix.join(posix.dirname(file), specifier));
  }
  if (/^(src|webview)(\/|$)/.test(specifier)) return posix.normalize(specifier);
  if (specifier.startsWith('/')) return `../${specifier}`; // absolute: outside every folder
  return undefined;
}

function within(target: string, folder: string): boolean {
  return target === folder || target.startsWith(`${folder}/`);
}

// ── import circles ────────────────────────────────────────────────────────────

/**
 * The import graph among `files`: each file's edges go to the files of the set its relative
 * imports name (`x` → `x.ts`, `x/index.ts`; a `.js` specifier → its `.ts`). Every form counts,
 * `import type` and `import('…')` in a type position too: a type import ties two files as much
 * as a value import does (one cannot be read, moved or tested without the other).
 */
export function importGraph(files: readonly SourceFile[]): Map<string, string[]> {
  const paths = new Set(files.map((f) => f.path));
  const resolve = (from: string, specifier: string): string | undefined => {
    const target = resolveInRepo(from, specifier);
    if (target === undefined) return undefined;
    const bare = target.replace(/\.(js|mjs|cjs)$/, '');
    return [target, `${bare}.ts`, `${bare}.mts`, `${bare}/index.ts`].find((c) => paths.has(c));
  };
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const to = new Set<string>();
    for (const ref of findImports(f.text)) {
      const t = resolve(f.path, ref.specifier);
      if (t !== undefined) to.add(t);
    }
    graph.set(f.path, [...to].sort());
  }
  return graph;
}

/**
 * Every import circle among `files`: the strongly connected components of the import graph
 * (Tarjan) with more than one file, or one file importing itself. Each circle is sorted, and
 * the list by its first file; empty when the graph has no cycle.
 */
export function importCircles(files: readonly SourceFile[]): string[][] {
  const graph = importGraph(files);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  // Iterative, so a long chain of imports cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const edges = graph.get(top.node)!;
      if (top.edge < edges.length) {
        const w = edges[top.edge++]!;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, edge: 0 });
        } else if (onStack.has(w)) low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
        if (w === top.node) break;
      }
      if (component.length > 1 || edges.includes(top.node)) circles.push(component.sort());
    }
  }
  return circles.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

// ── finding imports ───────────────────────────────────────────────────────────

const IMPORT_PATTERNS: readonly RegExp[] = [
  // import x from 'm', import type {x} from 'm', export * from 'm', export {x} from 'm'
  /(?<![.\w$])(?:import|export)\b[^;'"`]*?\bfrom\s*(['"])#(\d+)\1/g,
  // import 'm'
  /(?<![.\w$])import\s*(['"])#(\d+)\1/g,
  // import('m'), require('m'), import x = require('m')
  /(?<![.\w$])(?:import|require)\s*\(\s*(['"`])#(\d+)\1/g,
];

/**
 * Every module specifier a source imports, with its 1-based line. Comments, string
 * contents and regex literals are masked first, so `// import 'vscode'` or
 * `"require('vscode')"` are not imports; for .svelte only <script> blocks are read.
 */
export function findImports(text: string, svelte = false): ImportRef[] {
  const { code, literals } = maskLiterals(svelte ? scriptBlocksOnly(text) : text);
  const refs: ImportRef[] = [];
  for (const pattern of IMPORT_PATTERNS) {
    for (const m of code.matchAll(pattern)) {
      const specifier = literals[Number(m[2])];
      if (specifier === undefined || specifier.includes('${')) continue; // computed: not resolvable
      const line = countNewlines(code, m.index + m[0].length) + 1;
      // `import { type A }` is not type-only: under verbatimModuleSyntax it still loads the module.
      const typeOnly = /^(?:import|export)\s+type[\s{*]/.test(m[0]);
      refs.push({ specifier, line, typeOnly });
    }
  }
  return refs.sort((a, b) => a.line - b.line);
}

/** Blanks everything outside <script> blocks, keeping newlines so line numbers hold. */
function scriptBlocksOnly(text: string): string {
  const blank = (s: string): string => s.replace(/[^\n]/g, ' ');
  let out = '';
  let last = 0;
  const scripts = /(<script\b[^>]*>)([\s\S]*?)(<\/script\s*>)/gi;
  for (const m of text.matchAll(scripts)) {
    out += blank(text.slice(last, m.index)) + blank(m[1]!) + m[2]! + blank(m[3]!);
    last = m.index + m[0].length;
  }
  return out + blank(text.slice(last));
}

function countNewlines(s: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (s.charCodeAt(i) === 10) n++;
  return n;
}

// Keywords after which a `/` starts a regex literal rather than a division.
const REGEX_AFTER_WORD = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

/**
 * Replaces each string or template literal by `'#N'` (N indexes `literals`), each
 * comment by spaces and each regex literal by `/r/`. Newlines inside replaced text
 * are kept so offsets still map to the right line.
 */
export function maskLiterals(text: string): { code: string; literals: string[] } {
  const literals: string[] = [];
  let out = '';
  let i = 0;
  const n = text.length;
  const newlinesIn = (s: string): string => s.replace(/[^\n]/g, '');

  const lastSignificant = (): string => {
    const m = /(\S+)\s*$/.exec(out);
    return m ? m[1]! : '';
  };
  const regexAllowed = (): boolean => {
    const prev = lastSignificant();
    if (prev === '') return true;
    const ch = prev[prev.length - 1]!;
    if ('(,=:[!&|?{};+-*%<>~^'.includes(ch)) return true;
    const word = /([A-Za-z_$][\w$]*)$/.exec(prev);
    return word !== null && REGEX_AFTER_WORD.has(word[1]!);
  };

  // Returns the index just past a quoted string that opens at `start`.
  const skipQuoted = (start: number): number => {
    const quote = text[start];
    let j = start + 1;
    while (j < n && text[j] !== quote && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
    return Math.min(j + 1, n);
  };

  // Returns the index just past a template literal that opens at `start`,
  // stepping over `${ … }` expressions (which may hold strings, templates, braces).
  const skipTemplate = (start: number): number => {
    let j = start + 1;
    while (j < n && text[j] !== '`') {
      if (text[j] === '\\') j += 2;
      else if (text[j] === '$' && text[j + 1] === '{') j = skipCode(j + 2, '}');
      else j++;
    }
    return Math.min(j + 1, n);
  };

  // Skips code until the matching `close` brace; used only inside template expressions.
  const skipCode = (start: number, close: string): number => {
    let depth = 0;
    let j = start;
    while (j < n) {
      const c = text[j]!;
      if (c === '/' && text[j + 1] === '/') j = lineEnd(j);
      else if (c === '/' && text[j + 1] === '*') j = blockEnd(j);
      else if (c === '"' || c === "'") j = skipQuoted(j);
      else if (c === '`') j = skipTemplate(j);
      else if (c === '{') {
        depth++;
        j++;
      } else if (c === close && depth === 0) return j + 1;
      else {
        if (c === '}') depth--;
        j++;
      }
    }
    return n;
  };

  const lineEnd = (start: number): number => {
    const e = text.indexOf('\n', start);
    return e === -1 ? n : e;
  };
  const blockEnd = (start: number): number => {
    const e = text.indexOf('*/', start + 2);
    return e === -1 ? n : e + 2;
  };
  const skipRegex = (start: number): number => {
    let j = start + 1;
    let inClass = false;
    while (j < n && text[j] !== '\n') {
      const c = text[j];
      if (c === '\\') {
        j += 2;
        continue;
      }
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) {
        j++;
        break;
      }
      j++;
    }
    while (j < n && /[a-z]/i.test(text[j]!)) j++;
    return j;
  };

  while (i < n) {
    const c = text[i]!;
    if (c === '/' && text[i + 1] === '/') {
      const e = lineEnd(i);
      out += ' '.repeat(e - i);
      i = e;
    } else if (c === '/' && text[i + 1] === '*') {
      const e = blockEnd(i);
      out += text.slice(i, e).replace(/[^\n]/g, ' ');
      i = e;
    } else if (c === '"' || c === "'" || c === '`') {
      const e = c === '`' ? skipTemplate(i) : skipQuoted(i);
      const raw = text.slice(i, e);
      literals.push(raw.slice(1, raw.endsWith(c) && raw.length > 1 ? -1 : undefined));
      out += `${c}#${literals.length - 1}${c}${newlinesIn(raw)}`;
      i = e;
    } else if (c === '/' && regexAllowed()) {
      const e = skipRegex(i);
      out += `/r/${newlinesIn(text.slice(i, e))}`;
      i = e;
    } else {
      out += c;
      i++;
    }
  }
  return { code: out, literals };
}
