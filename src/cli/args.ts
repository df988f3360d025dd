/** Parsed command line: positionals and `--flag value` / `--flag` options. */
export interface ParsedArgs {
  positionals: string[];
  options: Map<string, string | true>;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Flags that take a value; every other `--x` is a boolean switch. */
const VALUED = new Set([
  'store',
  'workspace',
  'base-url',
  'model',
  'sandbox',
  'approval',
  'max-steps',
  'max-tokens',
  'cap-field',
  'timeout',
  'max-children',
  'max-rounds',
  'budget',
  'agent',
  'prices',
  'config',
  'child-approval',
  'permission-timeout',
  'hooks-file',
  'mcp-config',
  'allow-mcp',
  'mcp-allow-tools',
  'to',
  'undo',
  'on-conflict',
  'nodes',
  'node-stores',
  'node-repos',
]);
/** Valued flags that may be given more than once: their values join with commas. */
const REPEATABLE = new Set(['mcp-config', 'allow-mcp', 'mcp-allow-tools']);
const SWITCHES = new Set([
  'json',
  'help',
  'network',
  'subagents',
  'version',
  'unconfined-workflows',
  'claude-hooks',
  'no-hooks',
  'no-checkpoints',
  'files',
  'conversation',
  'both',
  'subtree',
  'dry-run',
  'allow-protected',
]);

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === '-h') {
      options.set('help', true);
      continue;
    }
    if (!a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2);
    if (VALUED.has(name)) {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
      const before = options.get(name);
      options.set(name, REPEATABLE.has(name) && typeof before === 'string' ? `${before},${v}` : v);
    } else if (SWITCHES.has(name)) {
      options.set(name, true);
    } else {
      throw new UsageError(`Unknown option --${name}`);
    }
  }
  return { positionals, options };
}

export function oneOf<T extends string>(name: string, value: string | true | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (value === true || !allowed.includes(value as T)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

export function positiveInt(name: string, value: string | true | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value === true || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}
