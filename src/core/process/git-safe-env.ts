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

/** What `addBareExplicit` changed in an environment: the values it set, and what each name held before. */
export interface BareExplicitMark {
  readonly set: Readonly<Record<string, string>>;
  readonly before: Readonly<Record<string, string | undefined>>;
}

/**
 * Adds `safe.bareRepository=explicit` to `env` in place, as `withBareExplicit` gives it (for an
 * environment others read at spawn time: the extension host's `process.env`, decision 0124).
 */
export function addBareExplicit(env: Record<string, string | undefined>): BareExplicitMark {
  const set: Record<string, string> = {};
  const before: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(withBareExplicit(env))) {
    if (env[name] === value) continue;
    before[name] = env[name];
    set[name] = value;
    env[name] = value;
  }
  return { set, before };
}

/**
 * Takes back what `mark` added, only while `env` still holds every value it set: once someone
 * appended a key after it (or changed the count), removing it would renumber theirs, so it stays.
 */
export function takeBackBareExplicit(env: Record<string, string | undefined>, mark: BareExplicitMark): boolean {
  if (Object.entries(mark.set).some(([name, value]) => env[name] !== value)) return false;
  for (const [name, value] of Object.entries(mark.before)) {
    // `process.env.X = undefined` would store the string "undefined".
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return true;
}
