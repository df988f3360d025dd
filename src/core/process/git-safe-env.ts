// The programs Arbor starts unconfined in a workspace — hooks, remote agents (Claude Code runs
// `git status` as it starts, Codex tracks its turn with git), MCP servers, a placement's git —
// run git there themselves. A command can plant a bare repository's files (`HEAD`, `config`,
// `objects/`, `refs/`) in a workspace folder without a `.git`, which git then takes for the
// repository and whose `core.fsmonitor` it runs (decision 0110). Their environment carries
// `safe.bareRepository=explicit` as command-line configuration (`GIT_CONFIG_COUNT`, which git
// counts as protected): a bare repository is used only when named.

/** `env` with `safe.bareRepository=explicit` added after any `GIT_CONFIG_KEY_<n>` it already gives. */
export function withBareExplicit<E extends Record<string, string | undefined>>(env: E): E & Record<string, string> {
  const given = Number(env.GIT_CONFIG_COUNT ?? '0');
  const n = Number.isSafeInteger(given) && given >= 0 ? given : 0;
  return { ...env, GIT_CONFIG_COUNT: String(n + 1), [`GIT_CONFIG_KEY_${n}`]: 'safe.bareRepository', [`GIT_CONFIG_VALUE_${n}`]: 'explicit' };
}
