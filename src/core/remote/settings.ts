import { execFile } from 'node:child_process';
import type { SandboxMode } from '../session/events';
import { type ProcessSpec, programEnv, resolveCommand } from './process';

/**
 * One remote program as the deployment configures it (VS Code's machine-scoped
 * `arbor.remote.*` settings, or the CLI's `--config` file): never from a workspace.
 */
export interface ProgramSettings {
  /** The program: a path or a command on PATH. */
  command: string;
  /** Passed through to the program (`-m` / `--model`); absent = the program's own default. */
  model?: string;
  /** Extra variables for the program (its own key, base URL…); Arbor's own keys are never passed. */
  env?: Record<string, string>;
  /** The program's own state folder (codex `CODEX_HOME`, claude `CLAUDE_CONFIG_DIR`; dsh-sdk: the folder of its children's stores, absent = `<store>/remote`); absent = its default. */
  home?: string;
  /** dsh-sdk: the child Arbor's model endpoint (`--base-url`); absent = the parent's. */
  baseUrl?: string;
  /** codex: extra `-c key=value` overrides (e.g. a model provider). */
  overrides?: string[];
  /** Stop the program when it says nothing for this long (ms); default 300000. */
  idleTimeoutMs?: number;
  /** Each step of a stop waits this long (ms); default 2000. */
  graceMs?: number;
  /** Stop one turn of the program after this long (ms) of wall-clock time, however busy it is; default an hour (decision 0044). */
  turnTimeoutMs?: number;
}

/**
 * One ACP agent (issue 14): any program that speaks the Agent Client Protocol over stdio,
 * run as a one-shot child through the provider `acp:<name>` and the tool `delegate_acp_<name>`.
 */
export interface AcpAgentSettings extends ProgramSettings {
  /** Names the provider and the tool: letters, digits and `_` (e.g. `claude`, `gemini`). */
  name: string;
  /** Arguments after the command (e.g. `["--acp"]`). */
  args?: string[];
  /** What the agent is, for the model choosing a tool ("Gemini CLI over ACP"); default: the name. */
  description?: string;
  /**
   * The agent's own session mode to set for each Arbor sandbox (`session/set_mode`), e.g.
   * `{"read-only": "read-only", "workspace-write": "auto"}`. A sandbox missing from a table that
   * is given is refused (never run wider); without a table the agent runs in its default mode
   * and every permission it asks for is answered by the child's approval policy.
   */
  modes?: Partial<Record<SandboxMode, string>>;
  /**
   * The agent's own project configuration (e.g. `[".kiro"]`): plain names protected at any depth in
   * this workspace like `.git` (decision 0115), since the agent acts on them outside every sandbox
   * and a confined command must not plant them. Gemini CLI's and OpenCode's are protected always.
   */
  protects?: string[];
}

export interface RemoteSettings {
  codex?: ProgramSettings;
  claudeCode?: ProgramSettings;
  /** Another Arbor (`arbor run --json`): `command` is its launcher (`bin/arbor.js` or `arbor`). */
  dshSdk?: ProgramSettings;
  /** ACP agents, each its own provider and delegation tool. */
  acp?: AcpAgentSettings[];
}

/** The stop timing a program's settings give its process; what they leave out keeps the process defaults. */
export function stopTiming(s: ProgramSettings): Pick<ProcessSpec, 'idleTimeoutMs' | 'graceMs'> {
  return { ...(s.idleTimeoutMs ? { idleTimeoutMs: s.idleTimeoutMs } : {}), ...(s.graceMs ? { graceMs: s.graceMs } : {}) };
}

const versions = new Map<string, Promise<string | undefined>>();

/** `<command> --version`, first line, once per command (undefined when it cannot run). */
export function programVersion(command: string, env?: Record<string, string>): Promise<string | undefined> {
  let v = versions.get(command);
  if (!v) {
    const exe = resolveCommand(command);
    v = !exe
      ? Promise.resolve(undefined)
      : new Promise((resolve) =>
          execFile(exe, ['--version'], { encoding: 'utf8', timeout: 30_000, env: programEnv(env) }, (err, stdout) =>
            resolve(err ? undefined : stdout.trim().split('\n')[0] || undefined),
          ),
        );
    versions.set(command, v);
  }
  return v;
}
