import { spawn } from 'node:child_process';
import * as path from 'node:path';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'arbor.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the real CLI in a new process (as a user would), with no API key in the environment; killed after `timeoutMs`. */
export function arbor(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const clean = { ...process.env, ARBOR_API_KEY: '', DEEPSEEK_API_KEY: '', OPENAI_API_KEY: '', ARBOR_STORE: '', ...env };
    const child = spawn(process.execPath, [BIN, ...args], { env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}
