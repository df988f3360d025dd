// A PreToolUse hook in Claude Code's format (Arbor runs it unchanged): it reads the tool call as
// JSON on stdin and blocks any command with `rm -rf` in it. Exit 2 blocks; stderr is the reason
// the model reads, and the transcript shows "hook PreToolUse blocked run_command: …".
let raw = '';
process.stdin.on('data', (d) => (raw += d));
process.stdin.on('end', () => {
  const input = JSON.parse(raw);
  const command = String(input.tool_input?.command ?? '');
  if (/\brm\s+-(?:[a-zA-Z]*r[a-zA-Z]*f|[a-zA-Z]*f[a-zA-Z]*r)\b/.test(command)) {
    process.stderr.write(`'rm -rf' is blocked in this workspace (hook .arbor/hooks/no-rm-rf.mjs); delete files one by one, or ask the user.`);
    process.exit(2);
  }
  process.exit(0);
});
