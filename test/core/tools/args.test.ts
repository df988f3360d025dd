import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { parseToolArguments } from '../../../src/core/tools/args';
import { createListFilesTool } from '../../../src/core/tools/list-files';
import { createReadFileTool } from '../../../src/core/tools/read-file';
import type { Tool } from '../../../src/core/tools/tool';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { call, makeWorkspace, type Workspace } from './fixture';

const readFile: Pick<Tool, 'name' | 'parameters'> = {
  name: 'read_file',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'the file path relative to the workspace' },
      startLine: { type: 'integer', minimum: 1, description: 'first line' },
      mode: { type: 'string', enum: ['text', 'hex'] },
      tags: { type: 'array', items: { type: 'string' } },
      opts: { type: 'object', properties: { deep: { type: 'boolean' } }, required: ['deep'], additionalProperties: false },
    },
    required: ['path'],
    additionalProperties: false,
  },
};

function message(raw: string): string {
  const r = parseToolArguments(readFile, raw);
  assert.equal(r.ok, false, `expected a failure for ${raw}`);
  return (r as { message: string }).message;
}

describe('parseToolArguments: model arguments against the tool schema', () => {
  it('accepts valid arguments and returns them', () => {
    const r = parseToolArguments(readFile, '{"path":"a.txt","startLine":3,"mode":"hex","tags":["x"],"opts":{"deep":true}}');
    assert.deepEqual(r, { ok: true, args: { path: 'a.txt', startLine: 3, mode: 'hex', tags: ['x'], opts: { deep: true } } });
  });

  it('names the tool, the field, what was expected (with its description) for a missing field', () => {
    assert.match(message('{}'), /^read_file: 'path' is required \(a string: the file path relative to the workspace\)/);
  });

  it('explains invalid JSON, quoting what was sent', () => {
    const m = message('{"path": "a.txt",');
    assert.match(m, /^read_file: the arguments are not valid JSON \(/);
    assert.match(m, /\{"path": "a\.txt",/);
  });

  it('refuses arguments that are not an object', () => {
    assert.match(message('["a.txt"]'), /must be a JSON object, got an array/);
    assert.match(message('"a.txt"'), /must be a JSON object, got a string \("a\.txt"\)/);
    assert.match(message('null'), /must be a JSON object, got null/);
    assert.match(message('42'), /got the integer 42/);
  });

  it('reports mistyped fields with the expected type and the given value', () => {
    assert.match(message('{"path": 7}'), /'path' must be a string: the file path relative to the workspace, got the integer 7/);
    assert.match(message('{"path":"a","startLine":"5"}'), /'startLine' must be an integer ≥ 1: first line, got a string \("5"\)/);
    assert.match(message('{"path":"a","startLine":1.5}'), /'startLine' must be an integer.*got the number 1\.5/);
    assert.match(message('{"path":"a","startLine":0}'), /'startLine' must be an integer ≥ 1.*got the integer 0/);
    assert.match(message('{"path":"a","mode":"bin"}'), /'mode' must be one of "text", "hex", got a string \("bin"\)/);
    assert.match(message('{"path":"a","tags":["x",3]}'), /'tags\[1\]' must be a string, got the integer 3/);
    assert.match(message('{"path":"a","tags":"x"}'), /'tags' must be an array of strings/);
  });

  it('checks nested objects: required, types and unknown properties', () => {
    assert.match(message('{"path":"a","opts":{}}'), /'opts\.deep' is required \(a boolean\)/);
    assert.match(message('{"path":"a","opts":{"deep":true,"x":1}}'), /'opts\.x' is not an argument of this tool \(known: deep\)/);
  });

  it('refuses unknown properties when additionalProperties is false, listing the known ones', () => {
    assert.match(message('{"path":"a","file":"b"}'), /'file' is not an argument of this tool \(known: path, startLine, mode, tags, opts\)/);
  });

  it('allows unknown properties when the schema does not forbid them', () => {
    const loose = { name: 't', parameters: { type: 'object' as const, properties: {} } };
    assert.deepEqual(parseToolArguments(loose, '{"anything":1}'), { ok: true, args: { anything: 1 } });
  });

  it('lists several problems at once and restates the signature', () => {
    const m = message('{"startLine":"x","bogus":true}');
    assert.match(m, /'path' is required/);
    assert.match(m, /'startLine' must be an integer/);
    assert.match(m, /'bogus' is not an argument/);
    assert.match(m, /Expected arguments: path \(string, required\), startLine \(integer\), mode \("text"\|"hex"\)/);
  });

  it('treats empty arguments as {} and null for an optional field as omitted', () => {
    const noArgs = { name: 'list_agents', parameters: { type: 'object' as const, properties: {}, additionalProperties: false } };
    assert.deepEqual(parseToolArguments(noArgs, ''), { ok: true, args: {} });
    assert.deepEqual(parseToolArguments(readFile, '{"path":"a","startLine":null}'), { ok: true, args: { path: 'a' } });
    assert.match(message('{"path":null}'), /'path' is required/);
  });
});

// JSON.parse makes "__proto__" an own key; a check that looks it up as `props[name]` finds
// Object.prototype, and a copy that assigns it sets the prototype of the arguments, so its
// contents would reach the tool as arguments no check ever saw.
describe('argument checks cannot be bypassed with "__proto__" (issue 10.11)', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
    ws.write('a.txt', 'one\ntwo\nthree\n');
    ws.write('d/e/f/g.txt', 'deep\n');
  });
  afterEach(() => ws.cleanup());

  it('read_file refuses a "__proto__" key and reads nothing through it', async () => {
    const r = await call(createReadFileTool(), '{"path":"a.txt","__proto__":{"startLine":"three","endLine":-4}}', ws.ctx());
    assert.equal(r.isError, true, r.content);
    assert.equal(r.code, 'INVALID_ARGUMENTS');
    assert.match(r.content, /'__proto__' is not an argument of this tool/);
  });

  it('list_files cannot get an unchecked depth past its maximum', async () => {
    const r = await call(createListFilesTool(), '{"recursive":true,"__proto__":{"depth":100000}}', ws.ctx());
    assert.equal(r.code, 'INVALID_ARGUMENTS', r.content);
    assert.match(r.content, /'__proto__' is not an argument/);
  });

  it('other keys of Object.prototype ("constructor", "toString") are unknown arguments too', async () => {
    for (const key of ['constructor', 'toString', 'hasOwnProperty']) {
      const r = await call(createWriteFileTool(), JSON.stringify({ path: 'b.txt', content: 'x', [key]: { type: 'string' } }), ws.ctx());
      assert.equal(r.code, 'INVALID_ARGUMENTS', `${key}: ${r.content}`);
      assert.match(r.content, new RegExp(`'${key}' is not an argument`));
    }
    assert.equal(fs.existsSync(ws.at('b.txt')), false);
  });

  it('a schema that allows unknown keys keeps "__proto__" as a plain key: nothing is inherited', () => {
    const loose = { name: 't', parameters: { type: 'object' as const, properties: { n: { type: 'integer' as const } } } };
    const r = parseToolArguments(loose, '{"__proto__":{"n":"not a number","polluted":true}}');
    assert.ok(r.ok);
    assert.equal(Object.getPrototypeOf(r.args), Object.prototype);
    assert.equal(r.args.n, undefined, 'n is not inherited from "__proto__"');
    assert.equal(r.args.polluted, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched');
  });
});
