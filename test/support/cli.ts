import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arborBin } from './cli-bundle';
import { ModelServer } from './model-server';

const BIN = arborBin();

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `file` with `args` in a new process, collecting its output; killed (SIGKILL) after `timeoutMs`. */
export function runProcess(file: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: opts.env, ...(opts.cwd ? { cwd: opts.cwd } : {}), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Run the real CLI in a new process (as a user would), with no API key in the environment; killed after `timeoutMs`. */
export function arbor(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<CliRun> {
  const clean = { ...process.env, ARBOR_API_KEY: '', DEEPSEEK_API_KEY: '', OPENAI_API_KEY: '', ARBOR_STORE: '', ...env };
  return runProcess(process.execPath, [BIN, ...args], { env: clean, timeoutMs });
}

/**
 * The set-up every CLI process test shares: one model server for the suite, a fresh folder per
 * test with a workspace (`ws`) and a store path (`store`), and `common`, the flags that point
 * `arbor` at them. Registers its mocha hooks in the calling describe.
 */
export interface CliWorld {
  readonly server: ModelServer;
  readonly dir: string;
  readonly ws: string;
  readonly store: string;
  readonly common: string[];
}

export function cliWorld(prefix: string, opts: { realDir?: boolean; extraFlags?: string[] } = {}): CliWorld {
  let server: ModelServer;
  let dir = '';
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    if (opts.realDir) dir = fs.realpathSync(dir);
    fs.mkdirSync(path.join(dir, 'ws'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    get server() {
      return server;
    },
    get dir() {
      return dir;
    },
    get ws() {
      return path.join(dir, 'ws');
    },
    get store() {
      return path.join(dir, 'store');
    },
    get common() {
      return [
        '--store',
        path.join(dir, 'store'),
        '--workspace',
        path.join(dir, 'ws'),
        '--base-url',
        server.baseURL,
        '--model',
        'test-model',
        ...(opts.extraFlags ?? []),
      ];
    },
  };
}
