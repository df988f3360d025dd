import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import { run, transportEnv } from '../../../src/core/placement/exec';
import { hostPath } from '../../../src/core/process/host-program';
import { ENV_ALLOW, programEnv } from '../../../src/core/remote/process';

// A transport's ssh, git and container engine get the one allow-list of remote programs
// (`remote/process.ts`'s ENV_ALLOW) plus the few variables only a transport needs, named in
// `exec.ts`: never a key of Arbor's, nor anything else of the host's (decisions 0071, 0078).

const SECRETS = {
  ARBOR_API_KEY: 'sk-arbor',
  DEEPSEEK_API_KEY: 'sk-deepseek',
  OPENAI_API_KEY: 'sk-openai',
  ANTHROPIC_API_KEY: 'sk-anthropic',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  GITHUB_TOKEN: 'ghp-token',
  // The host's own git ssh command must not steer the transport's git: only the transport sets it.
  GIT_SSH_COMMAND: 'ssh -o ProxyCommand=evil',
  LD_PRELOAD: '/tmp/evil.so',
};
const TRANSPORT_ONLY = {
  SSH_AUTH_SOCK: '/run/agent.sock',
  CONTAINER_HOST: 'unix:///run/podman.sock',
  CONTAINERS_CONF: '/etc/c.conf',
  DOCKER_HOST: 'tcp://d',
  DOCKER_CONFIG: '/d',
};

describe('placement exec: the environment a transport’s programs get', () => {
  it('is exactly ENV_ALLOW’s host variables, the transport’s named extras and its own values: no secret passes', () => {
    // PATH as absolute folders: a relative one is dropped (`host-program.ts`, decision 0109).
    const allowed = Object.fromEntries(ENV_ALLOW.map((k) => [k, k === 'PATH' ? '/v/bin:/v/usr/bin' : `v-${k}`]));
    const host = { ...allowed, ...TRANSPORT_ONLY, ...SECRETS };
    const env = transportEnv({ GIT_TERMINAL_PROMPT: '0' }, host);
    for (const [k, v] of Object.entries(SECRETS)) {
      assert.equal(env[k], undefined, `${k} stays home`);
      assert.ok(!Object.values(env).includes(v), `${k}'s value appears under no other name`);
    }
    assert.deepEqual(env, { ...allowed, ...TRANSPORT_ONLY, GIT_TERMINAL_PROMPT: '0' });
  });

  it('shares the list with remote programs: the transport adds only its extras, a remote program never gets them', () => {
    const host = { PATH: '/usr/bin', HOME: '/h', HTTPS_PROXY: 'http://p', ...TRANSPORT_ONLY, ...SECRETS };
    const transport = transportEnv({}, host);
    const program = programEnv({}, host);
    assert.deepEqual(transport, { ...program, ...TRANSPORT_ONLY });
    for (const k of Object.keys(TRANSPORT_ONLY)) assert.equal(program[k], undefined, `${k} is the transport's alone`);
  });

  it('a real program run by a transport sees no key of the host', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, SECRETS);
    try {
      const r = await run('env', [], { cwd: os.tmpdir(), env: transportEnv(), timeoutMs: 10_000 });
      assert.equal(r.end, 'exited');
      assert.equal(r.code, 0);
      const seen = new Map(
        r.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      // PATH without the folders Arbor's commands may write (decision 0109).
      assert.equal(seen.get('PATH'), hostPath(process.env.PATH), 'what it needs is there');
      assert.ok(seen.get('PATH')?.split(':').includes('/usr/bin'));
      for (const [k, v] of Object.entries(SECRETS)) {
        assert.equal(seen.has(k), false, `${k} stays home`);
        assert.ok(![...seen.values()].includes(v), `${k}'s value appears under no other name`);
      }
    } finally {
      for (const k of Object.keys(SECRETS))
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
    }
  });
});
