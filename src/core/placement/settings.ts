import { PlacementError, type PlacementSettings } from './types';

// Placements as the deployment configures them (decision 0071): VS Code's machine-scoped
// `arbor.placements`, or `placements` in the CLI's `--config` file — never a workspace's. One
// table of field rules, checked for both hosts; every problem names the entry and the field and
// says what to write instead. The CLI refuses to start on one; VS Code leaves that entry out and logs it.

type Kind = PlacementSettings['kind'];
type Field = keyof PlacementSettings;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Arbor's own model keys never travel through `env`: `passApiKey` is the one way, and it keeps them off every command line. */
const SECRET_ENV = /^(ARBOR_|DEEPSEEK_API_KEY$|OPENAI_API_KEY$)/;
/** An `-o` option as ssh reads it: `Key=Value` (a leading `-` would be another ssh flag). */
const SSH_OPTION = /^[A-Za-z][A-Za-z0-9]*=\S.*$/;

const str = (v: unknown) => typeof v === 'string' && v.trim() !== '';
/** A word given to ssh or the engine as an argument: never one that starts like a flag. */
const word = (v: unknown) => str(v) && !(v as string).startsWith('-') && !/[\s\0]/.test(v as string);
const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string' && x !== '');

interface Rule {
  /** The kinds it applies to; given on another kind, it is a mistake worth saying. */
  kinds: readonly Kind[];
  ok: (v: unknown) => boolean;
  /** What to write instead. */
  fix: string;
}

/** Every field but `name` and `kind`; a key not in this table is refused as unknown (a typo would otherwise be silently ignored). */
const RULES: { [K in Exclude<Field, 'name' | 'kind'>]-?: Rule } = {
  host: { kinds: ['ssh'], ok: word, fix: 'a host name, address or ~/.ssh/config alias (no spaces, not starting with "-")' },
  user: { kinds: ['ssh'], ok: (v) => word(v) && !(v as string).includes('@'), fix: 'a login name (no "@", no spaces)' },
  port: { kinds: ['ssh'], ok: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535, fix: 'a whole number from 1 to 65535' },
  identityFile: { kinds: ['ssh'], ok: str, fix: 'the path of a private key file' },
  sshOptions: {
    kinds: ['ssh'],
    ok: (v) => strings(v) && (v as string[]).every((o) => SSH_OPTION.test(o) && !/^BatchMode=/i.test(o)),
    fix: 'a list of ssh -o options like ["UserKnownHostsFile=~/.ssh/arbor_hosts"] (BatchMode stays yes: a placement never prompts)',
  },
  remoteDir: { kinds: ['ssh'], ok: (v) => str(v) && !/[\0\n]/.test(v as string), fix: 'a folder on the host, absolute or starting with ~/' },
  engine: { kinds: ['container'], ok: word, fix: '"podman", "docker", or the path of one' },
  image: { kinds: ['container'], ok: word, fix: 'an image name such as "localhost/arbor:0.1.0" that carries arbor at this version' },
  runArgs: { kinds: ['container'], ok: strings, fix: 'a list of extra run arguments like ["--network=host"]' },
  arbor: { kinds: ['ssh', 'container'], ok: (v) => word(v), fix: 'the arbor command on the other side ("arbor", or a path to bin/arbor.js)' },
  baseUrl: { kinds: ['ssh', 'container'], ok: (v) => typeof v === 'string' && /^https?:\/\/\S+$/.test(v), fix: 'an http(s) URL of the model endpoint' },
  model: { kinds: ['ssh', 'container'], ok: word, fix: 'a model name' },
  passApiKey: { kinds: ['ssh', 'container'], ok: (v) => typeof v === 'boolean', fix: 'true or false' },
  env: {
    kinds: ['ssh', 'container'],
    ok: (v) =>
      typeof v === 'object' &&
      v !== null &&
      !Array.isArray(v) &&
      Object.entries(v).every(([k, x]) => ENV_NAME.test(k) && !SECRET_ENV.test(k) && typeof x === 'string' && !x.includes('\0')),
    fix: 'a map of variable names to strings; Arbor\'s own keys (ARBOR_*, DEEPSEEK_API_KEY, OPENAI_API_KEY) are refused here: set "passApiKey": true instead',
  },
};

/** What each kind must have. */
const REQUIRED: Record<Kind, readonly Field[]> = { ssh: ['host'], container: ['image'] };
const KINDS = Object.keys(REQUIRED) as Kind[];

export interface PlacementsRead {
  placements: PlacementSettings[];
  /** One `BAD_PLACEMENT` error per entry left out (or for the whole value). */
  problems: PlacementError[];
}

/** `where` names the setting in messages (`arbor.placements`, `config.json: placements`). */
export function readPlacements(raw: unknown, where: string): PlacementsRead {
  const out: PlacementsRead = { placements: [], problems: [] };
  if (raw === undefined || raw === null) return out;
  if (!Array.isArray(raw)) {
    out.problems.push(bad(`${where} must be a list like [{"name": "box", "kind": "ssh", "host": "box.example"}]; it is ignored.`));
    return out;
  }
  const names = new Set<string>();
  raw.forEach((entry, i) => {
    const label = typeof (entry as { name?: unknown } | null)?.name === 'string' ? `${where}[${i}] ("${(entry as { name: string }).name}")` : `${where}[${i}]`;
    const read = readOne(entry, names);
    if (typeof read === 'string') out.problems.push(bad(`${label}: ${read}; this placement is left out.`));
    else {
      names.add(read.name);
      out.placements.push(read);
    }
  });
  return out;
}

/** The same check, throwing the first problem (a program given placements directly). */
export function checkPlacements(raw: unknown, where: string): PlacementSettings[] {
  const r = readPlacements(raw, where);
  if (r.problems.length) throw r.problems[0];
  return r.placements;
}

const bad = (message: string) => new PlacementError('BAD_PLACEMENT', message);

function readOne(entry: unknown, names: ReadonlySet<string>): PlacementSettings | string {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'must be an object with "name", "kind" and the kind\'s fields';
  const e = entry as Record<string, unknown>;
  if (typeof e.name !== 'string' || !NAME.test(e.name) || e.name === 'local')
    return '"name" must be 1–40 letters, digits, "_" or "-", starting with a letter or digit, and not "local" (it is what placement: "<name>" says)';
  if (names.has(e.name)) return `the name "${e.name}" is used twice: give each placement its own`;
  if (!KINDS.includes(e.kind as Kind)) return `"kind" must be one of ${KINDS.map((k) => `"${k}"`).join(', ')} ("local" needs no entry)`;
  const kind = e.kind as Kind;
  for (const [key, value] of Object.entries(e)) {
    if (key === 'name' || key === 'kind' || value === undefined) continue;
    const rule = (RULES as Record<string, Rule | undefined>)[key];
    if (!rule) return `"${key}" is not a placement field (known: ${Object.keys(RULES).join(', ')})`;
    if (!rule.kinds.includes(kind)) return `"${key}" applies to ${rule.kinds.join(' and ')} placements, not ${kind}: remove it`;
    if (!rule.ok(value)) return `"${key}" must be ${rule.fix}`;
  }
  for (const f of REQUIRED[kind]) if (e[f] === undefined) return `a ${kind} placement needs "${f}": ${(RULES as Record<string, Rule>)[f]!.fix}`;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(e)) {
    if (value === undefined) continue;
    out[key] = Array.isArray(value)
      ? [...value]
      : typeof value === 'object' && value !== null
        ? { ...value }
        : typeof value === 'string'
          ? value.trim()
          : value;
  }
  return out as unknown as PlacementSettings;
}
