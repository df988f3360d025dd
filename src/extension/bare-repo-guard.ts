import * as vscode from 'vscode';
import { addBareExplicit, type BareExplicitMark, takeBackBareExplicit } from '../core/process/git-safe-env';

// Decision 0124. Below a root's top a confined command can still plant a git folder (`sub/HEAD`,
// `config` with `core.worktree` and `core.fsmonitor`, `objects/`, `refs/`; 0123's s58 amendment).
// The git that VS Code's git extension (and every other extension here) starts takes the
// extension host's `process.env` as it is at each spawn, and the integrated terminals take the
// collection below: both get `safe.bareRepository=explicit` as command-scope configuration, which
// git counts as protected, so a git folder is used only when named and its fsmonitor never runs.
// A user's own `git -c safe.bareRepository=all` still wins (it comes later).

/** The setting under `arbor` (package.json `arbor.git.bareRepositoryExplicit`). */
const SECTION = 'git.bareRepositoryExplicit';
export const BARE_GUARD_SETTING = `arbor.${SECTION}`;

/** What the terminals' `GIT_CONFIG_PARAMETERS` starts with: a prepend composes with what the terminal already has. */
export const TERMINAL_GIT_PARAMETER = "'safe.bareRepository'='explicit' ";

const TERMINAL_WHY = new vscode.MarkdownString(
  `Arbor gives git \`safe.bareRepository=explicit\` (\`GIT_CONFIG_PARAMETERS\`): a git folder a command planted in the workspace (\`HEAD\`, \`config\`, \`objects/\`, \`refs/\`) is not taken as a repository, so its \`core.fsmonitor\` does not run. A repository named with \`--git-dir\` works as before. Setting: \`${BARE_GUARD_SETTING}\`.`,
);

/** On unless the user's own settings turn it off: a workspace's settings (a command may write them) cannot. */
export function bareGuardWanted(): boolean {
  return vscode.workspace.getConfiguration('arbor').inspect<boolean>(SECTION)?.globalValue !== false;
}

/** Adds the setting to the extension host's environment and the terminals', and takes back exactly what it added. */
export class BareRepoGuard implements vscode.Disposable {
  private mark: BareExplicitMark | undefined;

  constructor(
    private readonly terminals: vscode.EnvironmentVariableCollection,
    private readonly log: vscode.LogOutputChannel,
    private readonly env: Record<string, string | undefined> = process.env,
  ) {}

  /** `on`: both environments carry it (again adding nothing); off: both are taken back. */
  apply(on: boolean): void {
    if (on) {
      this.mark ??= addBareExplicit(this.env);
      this.terminals.description = TERMINAL_WHY;
      this.terminals.prepend('GIT_CONFIG_PARAMETERS', TERMINAL_GIT_PARAMETER);
      this.log.info(`git gets safe.bareRepository=explicit here and in new terminals (${BARE_GUARD_SETTING})`);
      return;
    }
    this.terminals.delete('GIT_CONFIG_PARAMETERS');
    this.takeBack();
    this.log.info(`git's safe.bareRepository is left to your configuration (${BARE_GUARD_SETTING} is off); terminals opened before keep it until they close`);
  }

  /**
   * The extension host's environment only: the terminals' collection persists (restored terminals
   * of the next window get it before Arbor activates), and VS Code drops it when Arbor is removed.
   */
  dispose(): void {
    this.takeBack();
  }

  private takeBack(): void {
    if (this.mark && !takeBackBareExplicit(this.env, this.mark)) {
      this.log.warn(
        'GIT_CONFIG_COUNT changed since Arbor added safe.bareRepository=explicit (another extension appended a key): it stays, so their keys keep their numbers',
      );
    }
    this.mark = undefined;
  }
}
