import type { CheckpointOptions } from '../checkpoint/service';
import type { ModelPrice } from '../cost/prices';
import type { FeatureRow } from '../feature/rows';
import type { HooksOptions } from '../hooks/service';
import type { McpDeployment } from '../mcp/deployment';
import type { CapFieldSetting } from '../model/cap-field';
import type { ModelClient } from '../model/types';
import type { PlacementSettings } from '../placement/types';
import type { PolicyCeiling } from '../policy/sandbox';
import type { ProjectFilesOptions } from '../project/project-files';
import type { RemoteSettings } from '../remote/settings';
import type { ApprovalPolicy, SandboxMode } from '../session/events';
import type { StoreOptions } from '../store/store';
import type { ApprovalPort } from '../tools/tool';
import type { WorkflowDeployment } from '../workflow/limits';

/** A deployment as a plain object: which store, model, workspace, policies and limits. */
export interface HarnessConfig {
  storeDir: string;
  /**
   * Stores of other harnesses in this process (`arbor acp`'s other workspace roots): protected as
   * this one's own is, from its file tools and its commands, where they lie inside its roots.
   */
  otherStores?: readonly string[];
  /** Workspace folders; the first is the default cwd. */
  workspace: string[];
  model:
    | {
        baseURL: string;
        name: string;
        apiKey: string;
        timeoutMs?: number;
        maxRetries?: number;
        maxTokens?: number;
        /** Which field carries the completion cap (`arbor.model.completionCapField`, decision 0043); default `auto`. */
        capField?: CapFieldSetting;
      }
    | { client: ModelClient; name: string; maxTokens?: number };
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  /** The widest any session runs under, its own switches included (VS Code's Restricted Mode); absent: none. */
  ceiling?: PolicyCeiling;
  approvalPort?: ApprovalPort;
  maxSteps?: number;
  compaction?: { thresholdTokens: number; keepTurns?: number };
  store?: StoreOptions;
  /** Standing scope key of this deployment's preset. */
  preset?: string;
  /** Deepest delegation allowed (root = 0); default 5 (`DEFAULT_MAX_DEPTH`). */
  maxDepth?: number;
  /** What a delegated child does with actions needing approval: refuse (default) or ask the human, tagged. */
  childApproval?: 'never' | 'escalate';
  /** How long a settled continuable child stays resident before release (ms); default 1000. */
  releaseDelayMs?: number;
  /** Children running at once, harness-wide; the rest queue in FIFO order (default 8). Live: `subagents.fanout.limit`. */
  maxConcurrentChildren?: number;
  /** With childApproval 'escalate': how long a child waits for the human before the request is denied (ms); default 300000. */
  escalateTimeoutMs?: number;
  /** The OS sandbox of `run_command` (decision 0005): whether confined commands get the network (default no), which bubblewrap. */
  commands?: {
    network?: boolean;
    bwrapPath?: string;
    /** The user's record of protected folders commands made below a root's top (decision 0111; `~/.arbor/made-by-commands.jsonl`). */
    madeRecord?: string;
  };
  /** Workflow limits (settings `arbor.workflow.*`); defaults in workflow/limits.ts. */
  workflow?: Partial<WorkflowDeployment>;
  /** A goal's round limit when the human gives none; default 10. */
  goalMaxRounds?: number;
  /** Price overrides over the defaults (`null` removes one): settings `arbor.prices`, `arbor run --prices` (decision 0033). */
  prices?: Record<string, ModelPrice | null>;
  /** Remote programs children may be delegated to (issue 13): machine settings only, never a workspace's. */
  remote?: RemoteSettings;
  /** This Arbor's version, which a placement's `arbor` must report; default: the package's own (`core/version.ts`). */
  version?: string;
  /** Where a node may run besides here (issue 26, decision 0071): machine settings or the CLI's --config file only, never a workspace's. */
  placements?: PlacementSettings[];
  /** MCP servers and who may start and call them (decision 0055); `harness.mcp.setServers` changes them live. */
  mcp?: McpDeployment;
  /**
   * Project instructions and agents defined in files (decision 0056). The workspace's AGENTS.md /
   * CLAUDE.md and `.arbor/agents`, `.claude/agents` are always read; the user-level file and folder
   * only when given (hosts pass ~/.arbor/AGENTS.md and ~/.arbor/agents).
   */
  project?: Omit<ProjectFilesOptions, 'root'>;
  /** Hooks in Claude Code's schema (decision 0057): which settings files, and whether the workspace is trusted. Absent: no hooks. */
  hooks?: HooksOptions;
  /**
   * Whether the workspace is trusted (VS Code's workspace trust; read at each use). Absent: trusted
   * (the CLI trusts the folder it runs in). Untrusted: no worktrees (their git reads the
   * repository's own configuration, which can name programs).
   */
  trusted?: () => boolean;
  /** Checkpoints per node (issue 24, decision 0059): on unless `enabled: false` (`--no-checkpoints`, `arbor.checkpoints.enabled`). */
  checkpoints?: CheckpointOptions;
  /** More feature rows (a remote provider's wiring), wired after the built-in ones. */
  rows?: FeatureRow[];
}

/** The deployment defaults a host may change while running (settings edited, trust granted): `setDefaults`. */
export interface HarnessDefaults {
  sandbox?: SandboxMode;
  approval?: ApprovalPolicy;
  /** The policy ceiling from the next tool call on; null lifts it (a workspace trusted again). */
  ceiling?: PolicyCeiling | null;
  /** What the next child started or resumed does with requests needing approval. */
  childApproval?: 'never' | 'escalate';
  /** Confined commands may use the network. */
  network?: boolean;
  /** The deepest delegation for the next child that starts (children already there keep their depth). */
  maxDepth?: number;
  /** How long the next settled continuable child stays resident (a timer already running keeps its delay). */
  releaseDelayMs?: number;
  /** Children running at once: a higher limit admits queued ones now; a lower one lets running ones finish. */
  maxConcurrentChildren?: number;
  goalMaxRounds?: number;
  /** Workflow limits for the next run (runs under way keep theirs). */
  workflow?: Partial<WorkflowDeployment>;
}

export type ModelConfig = HarnessConfig['model'];

/** Delegation depth when the deployment sets none: 5, as Claude Code and Qwen Code allow (issue 23.5). */
export const DEFAULT_MAX_DEPTH = 5;
