import type { SandboxStatus } from '../core/tools/sandbox/detect';

/** `arbor --help`: usage, then exactly what each sandbox mode and approval policy allow, and whether the OS sandbox works here. */
export function helpText(status: SandboxStatus): string {
  const here = status.available
    ? `active here (bubblewrap, ${status.name ?? status.bwrap})`
    : `NOT available here: ${status.reason}. Commands then need approval (never: refused; auto: run unconfined, unless --sandbox was given explicitly: refused). To fix it, ${status.remedy}`;
  return `arbor — a coding agent whose subagents form a tree you can steer

Usage:
  arbor run [options] PROMPT      run a new conversation until it settles
  arbor send [options] ID MESSAGE send a follow-up to a session (resumed from its log)
  arbor sessions [--json]         list sessions in the store
  arbor log ID                    print a session's events as JSON lines
  arbor rewind ID --to SEQ [--files|--conversation|--both] [--subtree] [--dry-run]
               [--on-conflict keep|restore]
                                  put back the files session ID (with --subtree: and its
                                  descendants) changed after event SEQ of its log, showing a diff
                                  per file first (--conversation: fork it there; --both: both);
                                  a file someone else changed too is a conflict: without
                                  --on-conflict nothing is written and it exits 1
  arbor rewind ID --undo SEQ      undo the rewind recorded as event SEQ
  arbor --version                 print Arbor's version
  arbor goal set ID OBJECTIVE [--max-rounds N]
                                  give a conversation a goal, armed in this process: rounds run
                                  until it completes (exit 0), blocks or hits its limit (exit 1)
  arbor goal resume ID            arm it again and drive rounds (refused while rounds are used up)
  arbor goal pause|clear ID       pause the goal, or clear it
  arbor goal limit ID N           set its round limit (1-1000, not below the rounds started)
  arbor worktree list [--json]    children that ran in their own git worktree (isolation: "worktree"):
                                  state (open, applied, discarded, kept), branch, files changed, and
                                  orphans a crash left behind
  arbor worktree diff ID          the child's changes against its base, as a unified diff
  arbor worktree apply ID [--allow-protected]
                                  merge the child's changes into the workspace's files (3-way, not
                                  committed); on a conflict nothing changes and it exits 1; a placed
                                  child's changes to protected paths (.vscode, .arbor, .claude,
                                  .codex, .gemini, .opencode, .mcp.json, opencode.json, a
                                  .code-workspace) are written only with --allow-protected
  arbor worktree discard|keep ID  remove its worktree and branch, or keep its work on its branch
  arbor worktree clean [ID]       remove an orphaned worktree (all of them without ID)
  arbor mcp list [--json]         the MCP servers (.mcp.json, .vscode/mcp.json, --mcp-config),
                                  started to show their state and tool count
  arbor mcp allow NAME            let the workspace's MCP server NAME start (remembered per workspace)
  arbor trust [FOLDER]            trust FOLDER's .arbor, .claude, .vscode or .git that a confined
                                  command made (review them first); until then the CLI refuses to
                                  run there
  arbor acp [options]             serve the Agent Client Protocol on stdio (an ACP client such as
                                  Zed or acpx starts it): JSON-RPC only on stdout, logs on stderr;
                                  stdin EOF or SIGTERM cancels running turns and exits 0

Options:
  --store DIR        session store (default: $ARBOR_STORE or WORKSPACE/.arbor/store)
  --workspace DIR    workspace folder (default: current folder)
  --base-url URL     OpenAI-compatible endpoint (default: $ARBOR_BASE_URL or https://api.deepseek.com)
  --model NAME       model name (default: $ARBOR_MODEL or deepseek-chat)
  --sandbox MODE     read-only | workspace-write (default) | full-access (see below)
  --approval MODE    never (default) | auto (see below)
  --network          let sandboxed commands use the IP network (default: none; Unix sockets
                     such as the Docker socket, D-Bus or ssh-agent stay out of reach)
  --unconfined-workflows
                     where no OS sandbox can start, run workflow scripts as plain child
                     processes (default: the workflow tool refuses there, NO_SANDBOX); with an
                     explicit --sandbox read-only or workspace-write it is a usage error
  --hooks-file FILE  your own hooks, in Claude Code's settings format (default: $ARBOR_USER_SETTINGS
                     or ~/.arbor/settings.json); the workspace's .arbor/settings.json hooks run too
                     (the folder the CLI runs in counts as trusted)
  --claude-hooks     also run the hooks of the workspace's .claude/settings.json (and .local.json)
  --no-hooks         run no hooks at all
  --no-checkpoints   record no checkpoints (what each step changed, for 'arbor rewind'); they are
                     kept in a shadow git repository in the store, never in the workspace's .git
  --config FILE      JSON settings (default: $ARBOR_CONFIG), e.g. remote programs to delegate to:
                     {"remote": {"codex": {"command": "codex"}, "claudeCode": {"command": "claude"},
                                 "dshSdk": {"command": "/path/to/arbor/bin/arbor.js", "baseUrl"?, "model"?},
                                 "acp": [{"name": "claude", "command": "claude-agent-acp", "args"?, "env"?,
                                          "modes"?: {"read-only": "plan", "workspace-write": "acceptEdits"}}]}}
  --max-steps N      model calls per turn before giving up (default 50)
  --max-children N   subagents running at once (default 8); the rest wait in order, queued
  --max-tokens N     max tokens per model reply (under a budget every request carries a
                     cap anyway: this, or 4096, lowered to what the budget has left)
  --cap-field F      auto (default) | max_tokens | max_completion_tokens: the field that
                     carries the cap (auto: max_completion_tokens for o1/o3/o4/gpt-5 models)
  --budget AMOUNT    run (or, with send, raise) a budget on the session and everything it
                     delegates: tokens (50000, 50k) and/or dollars ($2), e.g. "50k, $2";
                     "none" removes it. A request that does not fit stops the turn: budget
  --agent NAME       run: talk to an agent defined in a file (.arbor/agents/NAME.md,
                     .claude/agents, $ARBOR_USER_DIR/agents; default ~/.arbor/agents)
  --prices FILE      JSON of model → {input, cacheHit, output} USD per million tokens over
                     the defaults (null removes one); also $ARBOR_PRICES
  --timeout MS       how long the model may take to start answering, and to send its
                     next chunk once it has begun (default 120000)
  --mcp-config FILE  MCP servers of your own (Claude Code's {"mcpServers": {...}}); they start.
                     Servers in the workspace's .mcp.json start only once allowed:
  --allow-mcp NAME   for this run (or 'arbor mcp allow NAME' for good); both repeatable.
                     It starts NAME only as it ran when first allowed here: changed since, it
                     is refused (MCP_CHANGED) until 'arbor mcp allow NAME'
  --mcp-allow-tools LIST
                     MCP servers or tools called without asking (everything, mcp__everything__echo);
                     other MCP calls need approval (--approval auto allows them, except under an
                     explicit --sandbox read-only or workspace-write: there they are refused)
  --json             every event as one JSON line on stdout

ACP options (arbor acp):
  --sandbox MODE     the mode a new session starts in; the client switches it (session/set_mode),
                     so here it is no ceiling as it is for run, send and goal
  --approval MODE    ask (default: session/request_permission to the client) | never | auto
  --child-approval M never (default) | escalate: a subagent's request goes to the client too,
                     its label in the title, its lineage in _meta
  --permission-timeout MS
                     how long the client may take to answer before it is a denial (300000)
  --subagents        announce the delegation tree (subagent_update) even to a client that did
                     not advertise clientCapabilities.subagents
  --nodes DIR --node-stores DIR
                     serve a placement's nodes (what a placement starts, decision 0077): each folder
                     DIR/<node> is a workspace of its own, its store in the stores folder's <node>;
                     a cwd outside DIR is refused
  --node-repos DIR   with --nodes: the nodes' repositories (DIR/<key>.git); the workspace then
                     travels over this connection (_arbor/sync/*, decision 0081)
  Sessions of a cwd inside --workspace use --store; any other cwd (never /) keeps its own
  CWD/.arbor/store, made by its first session/new (a list or load makes none). The client's
  session/new mcpServers start as it gives them, outside the sandbox (its user's choice); their
  calls are approved as a command outside the sandbox is (--approval). A message
  past 32 MiB or nested past 256 levels is refused with its id; the connection goes on.

Sandbox modes (--sandbox). File tools read only inside the workspace, except in full-access.
  read-only        file tools write nothing; commands run in the OS sandbox with the whole
                   file system read-only
  workspace-write  file tools and commands write only inside the workspace folder; .git,
                   .vscode, .arbor, .mcp.json and *.code-workspace in it stay read-only for
                   commands, and file tools write them only with approval (at any depth, and
                   hooks folders)
  full-access      no OS sandbox: file tools write anywhere (protected paths with approval),
                   commands run unconfined with your permissions and network, without asking
  In read-only and workspace-write every command has no network (unless --network), no Unix
  sockets out of the sandbox (even with --network), and a private /tmp emptied when it ends,
  and every process it started is killed with it (timeout or interrupt). In every mode a command's environment holds no API key.
  OS sandbox: ${here}.

Approval policies (--approval) decide only what the sandbox does not allow by itself:
  never   refused, without asking: a write to a protected path, a command the model asks to
          run outside the OS sandbox, and every command when no OS sandbox can start
  auto    allowed, without asking: the same actions run (commands outside the sandbox run
          unconfined); the OS sandbox still confines every other command. An explicit
          --sandbox read-only or workspace-write is the widest anything runs under: there a
          command outside the OS sandbox, an MCP call not allowed up front (--mcp-allow-tools;
          in read-only only a tool its server declares read-only) and a remote agent's own
          permission request are refused (POLICY_CEILING), auto or not

API key: ARBOR_API_KEY, else DEEPSEEK_API_KEY / OPENAI_API_KEY (not needed for a local --base-url).
Workflow scripts run in bubblewrap too: no network, no files, their own PID namespace.
Bubblewrap: bwrap on PATH, or $ARBOR_BWRAP (also gives remote programs their own PID namespace).
Ctrl+C: the running turns end interrupted, remote programs get up to 5 s to stop, then are killed
(a second Ctrl+C kills them at once).
Exit codes: 0 done, 1 the turn failed, 2 bad usage, 130 interrupted (Ctrl+C).`;
}
