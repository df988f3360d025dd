// A program that misbehaves, run as a real process through the codex driver (the tests of
// bad-input.test.ts, the bench's remote.no_orphans): the script below plays `codex exec --json` in the mode FAKE_MODE names.
export const FAKE_CODEX = `#!/usr/bin/env node
const mode = process.env.FAKE_MODE;
const out = (o) => process.stdout.write((typeof o === 'string' ? o : JSON.stringify(o)) + '\\n');
if (process.argv.includes('--version')) { out('fake-codex 1.0'); process.exit(0); }
const start = () => out({ type: 'thread.started', thread_id: 'fake-thread' });
const msg = (text) => out({ type: 'item.completed', item: { id: 'm', type: 'agent_message', text } });
const done = () => out({ type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 2 } });
const modes = {
  junk() {
    start();
    out('this is not json');
    out('x'.repeat(8 * 1024 * 1024 + 10));
    out({ type: 'mystery.event', x: 1 });
    out('[1, 2]');
    msg('survived the junk');
    done();
  },
  noFinal() { start(); msg('half an answer'); },
  exit2() { process.stderr.write('usage: fake-codex [options]\\n'); process.exit(2); },
  silent() { start(); setInterval(() => {}, 1000); },
  stubborn() {
    process.on('SIGTERM', () => {});
    process.on('SIGINT', () => {});
    start();
    setInterval(() => {}, 1000);
  },
  family() {
    // A child of its own in the group (a shell command it runs), and deaf to the polite signals.
    require('child_process').spawn('sleep', ['600'], { stdio: 'ignore' });
    process.on('SIGTERM', () => {});
    process.on('SIGINT', () => {});
    start();
    setInterval(() => {}, 1000);
  },
  proto() {
    // Event types named after what every object has: unknown types, never handlers.
    start();
    for (const type of ['__proto__', 'hasOwnProperty', '__defineGetter__', 'constructor', 'toString']) out({ type });
    msg('survived the prototype');
    done();
  },
  env() {
    require('fs').writeFileSync(process.env.FAKE_ENV_OUT, JSON.stringify(process.env));
    start(); msg('env written'); done();
  },
};
modes[mode]();
`;
