import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PlacementSettings } from '../../src/core/placement/types';

// A REAL OpenSSH server for the placement tests and bench (issue 26): Debian's `openssh-server`
// (installed by `scripts/e2e/setup.mjs`, like bubblewrap), listening on 127.0.0.1 on a free port,
// with a throwaway host key, a throwaway user key in its own authorized_keys, its own known_hosts
// for the client, public keys only (no passwords, no keyboard-interactive), and stopped (kill +
// wait) by `stop()`. Nothing of the machine's own ssh configuration is touched.

export const SSHD = '/usr/sbin/sshd';

export interface Sshd {
  host: '127.0.0.1';
  port: number;
  /** The login user: the one running the tests (sshd runs as it, or as root for root). */
  user: string;
  /** The throwaway private key authorized on this server. */
  identityFile: string;
  /** A key this server does NOT accept (for the refused-key case). */
  strangerKey: string;
  /** known_hosts with this server's throwaway host key. */
  knownHosts: string;
  /** `-o` options a client needs: its own known_hosts, strict checking, only the given key, no agent. */
  sshOptions: string[];
  dir: string;
  /** What sshd wrote (its log, `-e`). */
  log(): string;
  stop(): Promise<void>;
}

/** An ssh placement that reaches this server (its host, port, user, key and known_hosts), with the caller's own fields. */
export function sshPlacement(sshd: Sshd, own: Pick<PlacementSettings, 'name'> & Partial<PlacementSettings>): PlacementSettings {
  return {
    kind: 'ssh',
    host: sshd.host,
    port: sshd.port,
    user: sshd.user,
    identityFile: sshd.identityFile,
    sshOptions: sshd.sshOptions,
    ...own,
  };
}

/** Why an sshd cannot start here, or undefined when it can. */
export function sshdMissing(): string | undefined {
  if (!fs.existsSync(SSHD)) return `${SSHD} is not installed (Debian package openssh-server; run npm run setup:e2e)`;
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'ssh-keygen is not installed (Debian package openssh-client)';
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const keygen = (file: string, comment: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file], { stdio: 'ignore' });

/** Start one; throws (with sshd's own words) when it does not listen within `startMs`. */
export async function startSshd(opts: { startMs?: number } = {}): Promise<Sshd> {
  const missing = sshdMissing();
  if (missing) throw new Error(missing);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-sshd-')));
  keygen(path.join(dir, 'host_key'), 'arbor-test-host');
  keygen(path.join(dir, 'user_key'), 'arbor-test-user');
  keygen(path.join(dir, 'stranger_key'), 'arbor-test-stranger');
  fs.copyFileSync(path.join(dir, 'user_key.pub'), path.join(dir, 'authorized_keys'));
  fs.chmodSync(path.join(dir, 'authorized_keys'), 0o600);
  // sshd as root needs its privilege-separation folder (the Debian service makes it at boot).
  if (process.getuid?.() === 0 && !fs.existsSync('/run/sshd')) fs.mkdirSync('/run/sshd', { mode: 0o755, recursive: true });
  const user = os.userInfo().username;
  let lastErr = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const config = path.join(dir, 'sshd_config');
    fs.writeFileSync(
      config,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${path.join(dir, 'host_key')}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        `AllowUsers ${user}`,
        // The throwaway files live under the (world-writable, sticky) temp folder.
        'StrictModes no',
        'UsePAM no',
        'PermitUserEnvironment no',
        'X11Forwarding no',
        'AllowTcpForwarding no',
        'PrintMotd no',
        // sshd runs every command through the user's login shell, and Debian's bash sources ~/.bashrc
        // for a command sshd started (SSH_CLIENT is set) unless it is a nested shell: this machine's
        // root .bashrc runs `pyenv init`, 1.2–2.5 s of a bare login here (bench notes). SHLVL=1 makes
        // the shell a nested one for this throwaway server alone; the user's own ssh is untouched.
        'SetEnv SHLVL=1',
        // Paired bench runs and fan-out open many connections at once.
        'MaxStartups 200:30:400',
        'MaxSessions 100',
        'LogLevel INFO',
        '',
      ].join('\n'),
    );
    const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      log = (log + s).slice(-200_000);
    });
    const listening = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), opts.startMs ?? 10_000);
      const poll = setInterval(() => {
        if (log.includes(`Server listening on 127.0.0.1 port ${port}`)) done(true);
      }, 20);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        clearInterval(poll);
        resolve(ok);
      };
      child.once('exit', () => done(false));
    });
    if (!listening) {
      lastErr = log.trim();
      await stopChild(child);
      continue;
    }
    const knownHosts = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHosts, `[127.0.0.1]:${port} ${fs.readFileSync(path.join(dir, 'host_key.pub'), 'utf8')}`);
    return {
      host: '127.0.0.1',
      port,
      user,
      identityFile: path.join(dir, 'user_key'),
      strangerKey: path.join(dir, 'stranger_key'),
      knownHosts,
      sshOptions: [
        `UserKnownHostsFile=${knownHosts}`,
        'GlobalKnownHostsFile=/dev/null',
        'StrictHostKeyChecking=yes',
        'IdentitiesOnly=yes',
        'IdentityAgent=none',
      ],
      dir,
      log: () => log,
      stop: async () => {
        await stopChild(child);
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw new Error(`sshd did not start: ${lastErr || 'no output'}`);
}

/** SIGTERM, then SIGKILL after 3 s; resolves once it has exited. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}
