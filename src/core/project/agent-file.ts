import { SANDBOX_MODES } from '../policy/sandbox';
import type { SandboxMode } from '../session/events';
import { expandToolNames } from '../tools/aliases';
import { type FrontField, FrontmatterError, parseFrontmatter } from './frontmatter';

/** A named agent checked in as a Markdown file (`.arbor/agents/*.md`, `.claude/agents/*.md`, the user's folder). */
export interface AgentDefinition {
  name: string;
  description: string;
  /** Allow-list of Arbor tool names (Claude Code's names mapped); absent = the caller's tools. */
  tools?: string[];
  /** A model name for the child; absent = the caller's. */
  model?: string;
  /** Narrows the child's sandbox; never widens the caller's (decision 0056). */
  sandbox?: SandboxMode;
  /** `worktree`: the child runs in its own git worktree (decision 0060). */
  isolation?: 'worktree';
  /** The configured placement it runs on (decision 0074); an unknown one is refused when it starts (UNKNOWN_PLACEMENT). */
  placement?: string;
  /** The body: the child's persona. */
  persona: string;
  /** Where it was read from (absolute path) and which folder kind. */
  file: string;
  origin: AgentOrigin;
}

export type AgentOrigin = 'workspace' | 'claude' | 'user';

/** A file that could not be read as an agent: the file, the line, what to fix. */
export interface AgentFileError {
  file: string;
  line: number;
  message: string;
}

export const AGENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Claude Code's model shorthands name Anthropic models, not this endpoint's: they mean "the caller's". */
const INHERIT_MODELS = new Set(['inherit', 'sonnet', 'opus', 'haiku']);

const KNOWN_KEYS = new Set(['name', 'description', 'tools', 'model', 'sandbox', 'isolation', 'placement', 'color']);
/** A placement's name (decision 0074): letters, digits, `_` and `-`. */
const PLACEMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Parse one agent file; a problem is a value naming the line, never a throw. */
export function parseAgentFile(file: string, text: string, origin: AgentOrigin): AgentDefinition | AgentFileError {
  const bad = (line: number, message: string): AgentFileError => ({ file, line, message });
  let parsed: ReturnType<typeof parseFrontmatter>;
  try {
    parsed = parseFrontmatter(text);
  } catch (err) {
    if (err instanceof FrontmatterError) return bad(err.line, err.message);
    throw err;
  }
  const { fields } = parsed;
  for (const [key, f] of fields) {
    if (!KNOWN_KEYS.has(key)) return bad(f.line, `unknown key "${key}"; an agent file takes name, description, tools, model, sandbox, isolation, placement`);
  }
  const text1 = (key: string): { v?: string; f?: FrontField; err?: AgentFileError } => {
    const f = fields.get(key);
    if (!f) return {};
    if (typeof f.value !== 'string') return { err: bad(f.line, `"${key}" must be one value, not a list`) };
    return { v: f.value, f };
  };
  const name = text1('name');
  if (name.err) return name.err;
  if (!name.v) return bad(name.f?.line ?? 1, 'missing "name": give the agent a name (lower case letters, digits, - and _)');
  if (!AGENT_NAME.test(name.v)) return bad(name.f!.line, `name "${name.v}" must be 1-64 lower-case letters, digits, - or _, starting with a letter or digit`);
  const description = text1('description');
  if (description.err) return description.err;
  if (!description.v) return bad(description.f?.line ?? 1, 'missing "description": say in one line when to use this agent');
  const def: AgentDefinition = { name: name.v, description: description.v.replace(/\s+/g, ' '), persona: parsed.body, file, origin };

  const tools = fields.get('tools');
  if (tools) {
    const list = typeof tools.value === 'string' ? tools.value.split(',') : tools.value;
    const names = list.map((s) => s.trim()).filter(Boolean);
    const wrong = names.find((n) => !/^[A-Za-z][\w:.-]*$/.test(n));
    if (wrong !== undefined) return bad(tools.line, `tool name "${wrong}" is not a tool name`);
    def.tools = expandToolNames(names);
  }
  const model = text1('model');
  if (model.err) return model.err;
  if (model.v && !INHERIT_MODELS.has(model.v)) def.model = model.v;
  const sandbox = text1('sandbox');
  if (sandbox.err) return sandbox.err;
  if (sandbox.v !== undefined) {
    if (!(SANDBOX_MODES as readonly string[]).includes(sandbox.v))
      return bad(sandbox.f!.line, `sandbox "${sandbox.v}" must be one of ${SANDBOX_MODES.join(', ')}`);
    def.sandbox = sandbox.v as SandboxMode;
  }
  const isolation = text1('isolation');
  if (isolation.err) return isolation.err;
  if (isolation.v !== undefined) {
    if (isolation.v !== 'worktree') return bad(isolation.f!.line, `isolation "${isolation.v}" must be worktree (or leave the key out)`);
    def.isolation = 'worktree';
  }
  const placement = text1('placement');
  if (placement.err) return placement.err;
  if (placement.v !== undefined) {
    if (!PLACEMENT_NAME.test(placement.v))
      return bad(placement.f!.line, `placement "${placement.v}" must be the name of a configured placement (letters, digits, "_" or "-")`);
    def.placement = placement.v;
  }
  return def;
}

export const isAgentFileError = (v: AgentDefinition | AgentFileError): v is AgentFileError => 'line' in v && 'message' in v;
