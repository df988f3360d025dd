import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PromptSection } from '../scope/prompt';
import type { ScopeRegistry } from '../scope/registry';
import { type AgentCatalogue, agentFilesIn, agentFolders, catalogueLine, readAgentCatalogue } from './agent-catalogue';
import type { AgentDefinition } from './agent-file';
import { DEFAULT_INSTRUCTION_BYTES, type Instructions, instructionCandidates, readInstructions } from './instructions';

export interface ProjectFilesOptions {
  /** The first workspace folder. */
  root: string;
  /** The folder tasks are about (instructions are read from root down to it); default root. */
  cwd?: string;
  /** The user's instructions file (hosts pass ~/.arbor/AGENTS.md); none when absent. */
  userInstructions?: string;
  /** The user's agent folder (hosts pass ~/.arbor/agents); none when absent. */
  userAgents?: string;
  /** Cap on the instructions in the prompt (default 32 KiB). */
  maxInstructionBytes?: number;
}

/** What the panel shows: the instruction files in effect, the agents, the files that are not agents. */
export interface ProjectSnapshot {
  instructions: { path: string; shown: string; level: 'user' | 'workspace'; bytes: number; included: number }[];
  skipped: { path: string; why: string }[];
  cutBytes: number;
  maxBytes: number;
  agents: { name: string; description: string; file: string; origin: AgentDefinition['origin']; tools?: string[]; model?: string; sandbox?: string }[];
  errors: { file: string; line: number; message: string }[];
}

export const INSTRUCTIONS_SECTION = 'project:instructions';
export const AGENTS_SECTION = 'project:agents';

/**
 * Instructions and agent files as global prompt sections (decision 0056). `refresh` runs before
 * every request: it stats the candidate files (a handful of syscalls) and re-reads only when one
 * changed, so the system prompt — the head of the provider's prefix cache — is the same bytes
 * for every agent and every request until a file changes; one request after a change pays one
 * cache miss from the system prompt on.
 */
export class ProjectFiles {
  private signature: string | undefined;
  private instructions: Instructions = { files: [], skipped: [], text: '', cutBytes: 0 };
  private catalogue: AgentCatalogue = { agents: [], errors: [] };
  private readonly unregister: (() => void)[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly maxBytes: number;

  constructor(
    private readonly opts: ProjectFilesOptions,
    private readonly prompts: ScopeRegistry<PromptSection>,
  ) {
    this.maxBytes = opts.maxInstructionBytes ?? DEFAULT_INSTRUCTION_BYTES;
    this.refresh();
  }

  /** Re-read when a file changed; true when something did. Never throws (a file is read or reported). */
  refresh(): boolean {
    const sig = this.currentSignature();
    if (sig === this.signature) return false;
    this.signature = sig;
    this.instructions = readInstructions({ root: this.opts.root, cwd: this.opts.cwd, userFile: this.opts.userInstructions, maxBytes: this.maxBytes });
    this.catalogue = readAgentCatalogue({ root: this.opts.root, userDir: this.opts.userAgents });
    for (const off of this.unregister.splice(0)) off();
    if (this.instructions.text) this.unregister.push(this.prompts.register({ name: INSTRUCTIONS_SECTION, order: 20, text: this.instructions.text }));
    const catalogue = catalogueText(this.catalogue.agents);
    if (catalogue) this.unregister.push(this.prompts.register({ name: AGENTS_SECTION, order: 30, text: catalogue }));
    for (const fn of this.listeners) fn();
    return true;
  }

  /** The agent of that name, from the files as they are now. */
  agent(name: string): AgentDefinition | undefined {
    this.refresh();
    return this.catalogue.agents.find((a) => a.name === name);
  }

  /** The names of the agents defined now (for error messages). */
  agentNames(): string[] {
    return this.catalogue.agents.map((a) => a.name);
  }

  snapshot(): ProjectSnapshot {
    return {
      instructions: this.instructions.files.map((f) => ({ ...f })),
      skipped: this.instructions.skipped.map((s) => ({ ...s })),
      cutBytes: this.instructions.cutBytes,
      maxBytes: this.maxBytes,
      agents: this.catalogue.agents.map((a) => ({
        name: a.name,
        description: a.description,
        file: a.file,
        origin: a.origin,
        ...(a.tools ? { tools: [...a.tools] } : {}),
        ...(a.model ? { model: a.model } : {}),
        ...(a.sandbox ? { sandbox: a.sandbox } : {}),
      })),
      errors: this.catalogue.errors.map((e) => ({ ...e })),
    };
  }

  /** Hear every re-read (the panel's list). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  dispose(): void {
    for (const off of this.unregister.splice(0)) off();
    this.listeners.clear();
  }

  /** Size, mtime and inode of every candidate file and agent file, and the agent folders' listings. */
  private currentSignature(): string {
    const parts: string[] = [];
    const stat = (p: string) => {
      const s = fs.statSync(p, { throwIfNoEntry: false });
      parts.push(s ? `${p}:${s.size}:${s.mtimeMs}:${s.ino}` : `${p}:-`);
    };
    for (const c of instructionCandidates({ root: this.opts.root, cwd: this.opts.cwd, userFile: this.opts.userInstructions, maxBytes: this.maxBytes }))
      c.paths.forEach(stat);
    for (const { dir } of agentFolders({ root: this.opts.root, userDir: this.opts.userAgents })) agentFilesIn(dir).forEach(stat);
    return parts.join('\n');
  }
}

/** The catalogue the model sees: names and descriptions, sorted by name (stable bytes). */
export function catalogueText(agents: readonly AgentDefinition[]): string {
  if (agents.length === 0) return '';
  return [
    '# Agents defined in files',
    'To delegate to one of these, call `subagent` with `agent` set to its name; its role, tools and model come from its file, and it never gets more permission than you have.',
    ...agents.map(catalogueLine),
  ].join('\n');
}

/** The user-level instructions file and agent folder under a user folder (hosts pass ~/.arbor). */
export function userProjectFiles(userDir: string): Pick<ProjectFilesOptions, 'userInstructions' | 'userAgents'> {
  return { userInstructions: path.join(userDir, 'AGENTS.md'), userAgents: path.join(userDir, 'agents') };
}
